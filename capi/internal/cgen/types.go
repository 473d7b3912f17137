package main

// ctype is one TYPENAME of the specification's type tables.
type ctype struct {
	name string // TYPENAME
	c    string // the C type
	tc   string // goshmem's type code (gs.h) for Go-side typed calls; "" when Go has no such type
	kind byte   // 'i' signed integer, 'u' unsigned, 'f' floating, 'c' complex
	// same is, for a fixed-width type, the TYPENAME of the standard C
	// type it is on LP64 Linux (int32_t is int), "" for a standard type:
	// a C11 _Generic may name a type once, so it lists the standard
	// types, and a fixed-width routine where the standard type has none
	// (shmem_atomic_and takes an int32_t *, an int *, through
	// shmem_int32_atomic_and: there is no shmem_int_atomic_and).
	same string
}

var types = []ctype{
	{"float", "float", "GS_F32", 'f', ""},
	{"double", "double", "GS_F64", 'f', ""},
	{"longdouble", "long double", "", 'f', ""},
	{"char", "char", "GS_I8", 'i', ""},
	{"schar", "signed char", "GS_I8", 'i', ""},
	{"short", "short", "GS_I16", 'i', ""},
	{"int", "int", "GS_I32", 'i', ""},
	{"long", "long", "GS_I64", 'i', ""},
	{"longlong", "long long", "GS_I64", 'i', ""},
	{"uchar", "unsigned char", "GS_U8", 'u', ""},
	{"ushort", "unsigned short", "GS_U16", 'u', ""},
	{"uint", "unsigned int", "GS_U32", 'u', ""},
	{"ulong", "unsigned long", "GS_U64", 'u', ""},
	{"ulonglong", "unsigned long long", "GS_U64", 'u', ""},
	{"int8", "int8_t", "GS_I8", 'i', "schar"},
	{"int16", "int16_t", "GS_I16", 'i', "short"},
	{"int32", "int32_t", "GS_I32", 'i', "int"},
	{"int64", "int64_t", "GS_I64", 'i', "long"},
	{"uint8", "uint8_t", "GS_U8", 'u', "uchar"},
	{"uint16", "uint16_t", "GS_U16", 'u', "ushort"},
	{"uint32", "uint32_t", "GS_U32", 'u', "uint"},
	{"uint64", "uint64_t", "GS_U64", 'u', "ulong"},
	{"size", "size_t", "GS_U64", 'u', "ulong"},
	{"ptrdiff", "ptrdiff_t", "GS_I64", 'i', "long"},
	{"complexd", "double _Complex", "", 'c', ""},
	{"complexf", "float _Complex", "", 'c', ""},
}
