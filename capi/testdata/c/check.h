/* check.h: what the C test programs share. A failed check prints FAIL
 * with the place and ends the job through shmem_global_exit. */
#include <stdio.h>
#include <stdlib.h>
#include <shmem.h>

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      printf("FAIL PE %d %s:%d: ", shmem_my_pe(), __FILE__, __LINE__);      \
      printf(__VA_ARGS__);                                                   \
      printf("\n");                                                          \
      shmem_global_exit(1);                                                  \
    }                                                                        \
  } while (0)

#define PASS(name) printf("%s ok\n", name)
