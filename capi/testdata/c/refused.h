/* refused.h: what the programs that make refused calls share. Under
 * SHMEMX_ERRORS_RETURN a refused call returns; its error, which
 * shmemx_last_error keeps, must name the call and say why. */
#include <string.h>
#include <shmemx.h>
#include "check.h"

static inline void refused_as(const char *call, const char *want) {
  const char *e = shmemx_last_error();
  CHECK(strstr(e, call) && strstr(e, want), "%s: last error \"%s\", want it to name the call and say \"%s\"", call, e, want);
}
