/* mpp/shmemx.h: the older path of shmemx.h (see mpp/shmem.h). */
#include <shmemx.h>
