package main

// ctype is one TYPENAME of the specification's type tables.
type ctype struct {
	name string // TYPENAME
	c    string // the C type
	tc   string // goshmem's type code (gs.h) for Go-side typed calls; "" when Go has no such type
	kind byte   // 'i' signed integer, 'u' unsigned, 'f' floating, 'c' complex
	// distinct marks the C types a C11 _Generic may list: int8_t and
	// signed char (and the like) are the same type, and a _Generic may
	// name a type once.
	distinct bool
}

var types = []ctype{
	{"float", "float", "GS_F32", 'f', true},
	{"double", "double", "GS_F64", 'f', true},
	{"longdouble", "long double", "", 'f', true},
	{"char", "char", "GS_I8", 'i', true},
	{"schar", "signed char", "GS_I8", 'i', true},
	{"short", "short", "GS_I16", 'i', true},
	{"int", "int", "GS_I32", 'i', true},
	{"long", "long", "GS_I64", 'i', true},
	{"longlong", "long long", "GS_I64", 'i', true},
	{"uchar", "unsigned char", "GS_U8", 'u', true},
	{"ushort", "unsigned short", "GS_U16", 'u', true},
	{"uint", "unsigned int", "GS_U32", 'u', true},
	{"ulong", "unsigned long", "GS_U64", 'u', true},
	{"ulonglong", "unsigned long long", "GS_U64", 'u', true},
	{"int8", "int8_t", "GS_I8", 'i', false},
	{"int16", "int16_t", "GS_I16", 'i', false},
	{"int32", "int32_t", "GS_I32", 'i', false},
	{"int64", "int64_t", "GS_I64", 'i', false},
	{"uint8", "uint8_t", "GS_U8", 'u', false},
	{"uint16", "uint16_t", "GS_U16", 'u', false},
	{"uint32", "uint32_t", "GS_U32", 'u', false},
	{"uint64", "uint64_t", "GS_U64", 'u', false},
	{"size", "size_t", "GS_U64", 'u', false},
	{"ptrdiff", "ptrdiff_t", "GS_I64", 'i', false},
	{"complexd", "double _Complex", "", 'c', true},
	{"complexf", "float _Complex", "", 'c', true},
}
