/* statics_unshared.c: where the statics are not symmetric (a program
 * linked with libgoshmem.a, whose Go runtime's data lies among the
 * program's), a put into a peer's static ends the program with a message
 * naming the call and saying why. */
#include "check.h"

static long dest[10];

int main(void) {
  shmem_init();
  int me = shmem_my_pe();
  long src[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  shmem_barrier_all();
  shmem_long_put(dest, src, 10, 1 - me); /* ends the job with the message */
  shmem_barrier_all();
  printf("FAIL PE %d: the put to an unshared static returned\n", me);
  return 0;
}
