/* mpp/shmem.h: the path older OpenSHMEM programs include (SGI SHMEM, and
 * still shipped by Sandia OpenSHMEM and Open MPI's OSHMEM): shmem.h. */
#include <shmem.h>
