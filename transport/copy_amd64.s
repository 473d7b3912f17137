#include "textflag.h"

// func repCopy(dst, src unsafe.Pointer, n uintptr)
TEXT ·repCopy(SB), NOSPLIT, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
	REP;	MOVSB
	RET
