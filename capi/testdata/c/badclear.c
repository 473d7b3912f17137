/* badclear.c: PE 1 clears a lock that PE 0 holds, a static one with the
 * argument "static", else one from shmem_malloc. Only the holder may
 * clear a lock: the call aborts the job with a message naming it, the
 * caller and the holder. PE 1 prints "FAIL" if the clear returns. */
#include <string.h>
#include "check.h"

static long slock;

int main(int argc, char **argv) {
  shmem_init();
  int me = shmem_my_pe();
  long *lock = argc > 1 && strcmp(argv[1], "static") == 0 ? &slock : shmem_calloc(1, sizeof(long));
  if (me == 0) shmem_set_lock(lock);
  shmem_barrier_all();
  if (me == 1) {
    shmem_clear_lock(lock);
    printf("FAIL PE 1 cleared the lock PE 0 holds\n");
    fflush(stdout);
  }
  shmem_barrier_all();
  shmem_finalize();
  return 0;
}
