/* statics.c: the program's global and static variables as symmetric data.
 *
 * OpenSHMEM makes a C program's globals and statics symmetric: the spec's
 * own examples put into a `static long dest[10]`. goshmem maps only its
 * heap, so at init this file turns the executable's writable data (.data
 * and .bss) into shared memory that same-host peers can map:
 *
 *  1. Before the world starts, gs_statics_prepare finds the region (the
 *     executable's writable PT_LOAD segment after RELRO, up to the end of
 *     .bss, checked against /proc/self/maps), copies it into a memfd and
 *     maps the memfd over the same addresses with MAP_FIXED|MAP_SHARED:
 *     every static keeps its address and value. The Go side hands the
 *     region to shmem.Init (WithStatics): peers on other hosts, or with
 *     TCP forced, reach it through the network transport, whose listener
 *     checks each request against this process's region.
 *  2. gs_statics_local publishes {pid, fd, dev, ino, size} in this PE's
 *     words of the library's symmetric area.
 *  3. After a barrier, gs_statics_map opens each mapped peer's memfd
 *     through /proc/<pid>/fd/<fd> (checking the inode, so a pid from
 *     another namespace cannot hand us a stranger's file) and maps it.
 *
 * A memfd has no name: nothing is ever created in /dev/shm, so nothing can
 * be left there, even by a kill -9. The memory lives while a process maps
 * it. gs_at (gs.h) then translates a static's offset from gs_dbase into
 * gs_dpeer[pe]. Peers without a mapping (other hosts, TCP forced) take the
 * Go path, the network's. Statics are symmetric between PEs that run the
 * same executable: the sizes' check below, and Init's comparison of every
 * PE's size (the region handed to shmem.WithStatics) and layout
 * (gs_statics_layout, shmem.WithStaticsLayout), refuse others. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "gs.h"

char *gs_dbase;
size_t gs_dsize;
char **gs_dpeer;
/* Why statics are not symmetric in this process ("" when they are): the
 * Go side adds it to the error of an RMA to a static it cannot reach. */
char gs_dwhy[320];

/* The remapped region and its memfd outlive finalize: the program keeps
 * using its statics, and a later init publishes the same memfd again. */
static uintptr_t region_lo, region_hi, load_bias;
static int region_fd = -1;

/* gs_dinfo is what a PE publishes about its region; GS_DINFO_WORDS in
 * gs.h reserves its room in the library's symmetric area. */
typedef struct {
  uint64_t magic, pid, fd, dev, ino, size;
} gs_dinfo; /* the last of the words is teamstatic.c's */
#define DINFO_MAGIC 0x676f73746174696cULL /* "gostatil" */

_Static_assert(sizeof(gs_dinfo) <= 8 * (GS_DINFO_WORDS - 1), "gs_dinfo outgrew its words");

__attribute__((format(printf, 1, 2))) static void why(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(gs_dwhy, sizeof gs_dwhy, fmt, ap);
  va_end(ap);
}

/* The first object dl_iterate_phdr visits is the executable. Its writable
 * PT_LOAD segment holds .data and .bss (p_memsz reaches the end of .bss);
 * the part up to the end of PT_GNU_RELRO is made read-only by ld.so after
 * relocation (the end rounded down to a page, as ld.so rounds it) and is
 * not program data. */
static int exe_phdr(struct dl_phdr_info *info, size_t sz, void *arg) {
  (void)sz;
  uintptr_t *r = arg, lo = UINTPTR_MAX, hi = 0, relro = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t a = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
      if (a < lo) lo = a;
      if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    } else if (ph->p_type == PT_GNU_RELRO) {
      relro = a + ph->p_memsz;
    }
  }
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  relro &= ~(page - 1);
  if (relro > lo) lo = relro;
  r[0] = lo & ~(page - 1);
  r[1] = (hi + page - 1) & ~(page - 1);
  r[2] = info->dlpi_addr;
  return 1;
}

/* check_maps confirms in /proc/self/maps that [lo, hi) is wholly mapped
 * private and read-write, by the executable's file or anonymously (.bss
 * past the file's last page; the kernel may label that "[heap]" when brk
 * starts right after it, with address randomization off). */
static int check_maps(uintptr_t lo, uintptr_t hi) {
  struct stat exe;
  if (stat("/proc/self/exe", &exe) != 0) {
    why("cannot stat /proc/self/exe: %s", strerror(errno));
    return -1;
  }
  /* Overlay filesystems show the underlying file's device in maps, not
   * the one stat reports: the path identifies the executable too. */
  char exe_path[4096];
  ssize_t len = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
  exe_path[len > 0 ? len : 0] = 0;
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) {
    why("cannot read /proc/self/maps: %s", strerror(errno));
    return -1;
  }
  char line[4096];
  uintptr_t covered = lo;
  int ok = 1;
  while (ok && covered < hi && fgets(line, sizeof line, f)) {
    unsigned long s, e, off, ino;
    unsigned maj, mnr;
    char perms[8], path[4096] = "";
    if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %4095[^\n]", &s, &e, perms, &off, &maj, &mnr, &ino, path) < 7) continue;
    if (e <= covered || s >= hi) continue;
    char *p = path;
    while (*p == ' ') p++;
    int mine = (ino == (unsigned long)exe.st_ino && makedev(maj, mnr) == exe.st_dev) || (*exe_path && strcmp(p, exe_path) == 0);
    int anon = ino == 0 && (*p == 0 || strcmp(p, "[heap]") == 0);
    ok = s <= covered && strcmp(perms, "rw-p") == 0 && (mine || anon);
    if (ok) covered = e;
    else why("the executable's data at %#lx is not a private read-write mapping of it", s);
  }
  fclose(f);
  if (ok && covered < hi) {
    why("the executable's data is not wholly mapped (a gap at %#lx)", (unsigned long)covered);
    ok = 0;
  }
  return ok ? 0 : -1;
}

/* copy_sparse copies the region into the fresh (zero) memfd page by page,
 * skipping pages of zeros: a large static buffer the program has not used
 * yet must not cost memory, and a memfd's untouched pages cost none.
 * (Reading an untouched .bss page maps the kernel's zero page: free.) */
static void copy_sparse(char *to, uintptr_t lo, size_t n) {
  static const char zero[65536];
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (size_t at = 0; at < n; at += page) {
    const char *src = (const char *)lo + at;
    if (page <= sizeof zero && memcmp(src, zero, page) == 0) continue;
    memcpy(to + at, src, page);
  }
}

/* remap moves [lo, hi) into a new memfd, mapped shared at the same
 * addresses. The copy and the swap are not atomic against other threads
 * writing statics: shmem_init comes before a program's threads, as usual;
 * Go's runtime lives in libgoshmem.so's own data, which is not in range. */
static int remap(uintptr_t lo, uintptr_t hi) {
  size_t n = hi - lo;
  int fd = memfd_create("goshmem-statics", MFD_CLOEXEC);
  if (fd < 0) {
    why("memfd_create: %s", strerror(errno));
    return -1;
  }
  if (ftruncate(fd, (off_t)n) != 0) {
    why("ftruncate of the statics' memfd: %s", strerror(errno));
    close(fd);
    return -1;
  }
  void *tmp = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (tmp == MAP_FAILED) {
    why("mmap of the statics' memfd: %s", strerror(errno));
    close(fd);
    return -1;
  }
  copy_sparse(tmp, lo, n);
  /* From here the old private pages are replaced: a failure would leave
   * the statics unmapped, so it ends the program. */
  if (mmap((void *)lo, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != (void *)lo) {
    char msg[200];
    snprintf(msg, sizeof msg, "goshmem: shmem_init: mapping the statics over themselves failed: %s", strerror(errno));
    gs_die(msg, 1);
  }
  munmap(tmp, n);
  region_fd = fd;
  return 0;
}

/* gs_statics_prepare makes this process's statics shared memory, once per
 * process, before shmem_init starts the world: the world's data listener
 * serves them to peers on other hosts (shmem.WithStatics) from then on.
 * It returns their base and stores their size in *size, or returns NULL
 * with gs_dwhy saying why they cannot be symmetric (the heap still works). */
char *gs_statics_prepare(size_t *size) {
  if (region_fd < 0) {
    uintptr_t r[3] = {0, 0, 0};
    dl_iterate_phdr(exe_phdr, r);
    gs_dwhy[0] = 0;
    if (r[0] >= r[1]) {
      why("the executable has no writable data segment");
    } else if ((uintptr_t)&gs_dsize >= r[0] && (uintptr_t)&gs_dsize < r[1]) {
      /* libgoshmem.a: Go's runtime data is among the program's, and its
       * threads write it while a copy would be taken. */
      why("libgoshmem is linked statically (its Go runtime's data lies among the program's statics): link libgoshmem.so");
    } else if (check_maps(r[0], r[1]) == 0 && remap(r[0], r[1]) == 0) {
      region_lo = r[0];
      region_hi = r[1];
      load_bias = r[2];
    }
  }
  *size = region_fd >= 0 ? region_hi - region_lo : 0;
  return region_fd >= 0 ? (char *)region_lo : NULL;
}

/* mix64 is a 64-bit finalizer (splitmix64's): it spreads every input bit
 * over the result, so that a sum of mixed values tells sets apart. */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* name_hash is FNV-1a over the NUL-terminated name at str[0:max). */
static uint64_t name_hash(const char *str, size_t max) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < max && str[i]; i++) h = (h ^ (unsigned char)str[i]) * 0x100000001b3ULL;
  return h;
}

/* symbols_digest sums, over the data symbols of the ELF image e (n bytes)
 * that lie in the statics, a mix of each one's name, offset in the region
 * and size: a sum, so the symbol table's order does not matter. 0: no
 * such symbol, or a malformed image. Every offset read is checked against
 * n first. */
static uint64_t symbols_digest(const unsigned char *e, size_t n) {
  const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)e;
  if (n < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
      eh->e_shoff > n || eh->e_shnum > (n - eh->e_shoff) / sizeof(ElfW(Shdr)))
    return 0;
  const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(e + eh->e_shoff);
  /* The full table when the executable has one; stripped, the dynamic
   * one (the objects it exports and copies in). */
  const ElfW(Shdr) *tab = NULL;
  for (int want = SHT_SYMTAB; !tab && want; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0)
    for (unsigned i = 0; i < eh->e_shnum; i++)
      if (sh[i].sh_type == (ElfW(Word))want) {
        tab = &sh[i];
        break;
      }
  if (!tab || tab->sh_link >= eh->e_shnum || tab->sh_entsize != sizeof(ElfW(Sym))) return 0;
  const ElfW(Shdr) *str = &sh[tab->sh_link];
  if (tab->sh_offset > n || tab->sh_size > n - tab->sh_offset || str->sh_offset > n || str->sh_size > n - str->sh_offset)
    return 0;
  const ElfW(Sym) *sym = (const ElfW(Sym) *)(e + tab->sh_offset);
  const char *names = (const char *)(e + str->sh_offset);
  uint64_t sum = 0;
  for (size_t i = 0; i < tab->sh_size / sizeof *sym; i++) {
    int type = ELF64_ST_TYPE(sym[i].st_info);
    uintptr_t at = load_bias + sym[i].st_value;
    if ((type != STT_OBJECT && type != STT_NOTYPE) || sym[i].st_shndx == SHN_UNDEF || at < region_lo || at >= region_hi ||
        sym[i].st_name >= str->sh_size)
      continue;
    uint64_t h = name_hash(names + sym[i].st_name, str->sh_size - sym[i].st_name);
    sum += mix64(h ^ mix64((uint64_t)(at - region_lo) ^ mix64((uint64_t)sym[i].st_size << 1)));
  }
  return sum;
}

/* gs_statics_layout returns a digest of what lies where in the statics
 * (their symbols' names, offsets and sizes, from the executable's file),
 * or 0 when there is nothing to digest (no statics, no symbols, the file
 * unreadable). Two PEs that run different executables whose statics have
 * the same size still differ here: Init refuses them by name
 * (shmem.WithStaticsLayout). */
uint64_t gs_statics_layout(void) {
  if (region_fd < 0) return 0;
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  uint64_t d = 0;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void *e = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (e != MAP_FAILED) {
      d = symbols_digest(e, (size_t)st.st_size);
      munmap(e, (size_t)st.st_size);
    }
  }
  close(fd);
  return d;
}

/* gs_statics_local publishes this process's statics (gs_statics_prepare)
 * in info, this PE's words of the symmetric area, for same-host peers to
 * map. A process whose statics cannot be shared publishes size 0. */
void gs_statics_local(void *info) {
  gs_dinfo d = {DINFO_MAGIC, (uint64_t)getpid(), 0, 0, 0, 0};
  if (region_fd >= 0) {
    struct stat st;
    fstat(region_fd, &st);
    d.fd = (uint64_t)region_fd;
    d.dev = (uint64_t)st.st_dev;
    d.ino = (uint64_t)st.st_ino;
    d.size = region_hi - region_lo;
  }
  memcpy(info, &d, sizeof d);
}

/* map_peer maps the region d describes, or returns NULL with gs_dwhy set. */
static char *map_peer(const gs_dinfo *d, int pe) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%llu/fd/%llu", (unsigned long long)d->pid, (unsigned long long)d->fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    why("cannot open PE %d's statics (%s): %s", pe, path, strerror(errno));
    return NULL;
  }
  struct stat st;
  char *m = NULL;
  if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != d->ino || (uint64_t)st.st_dev != d->dev || (uint64_t)st.st_size != d->size) {
    why("%s is not PE %d's statics (another pid namespace?)", path, pe);
  } else {
    m = mmap(NULL, d->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      why("cannot map PE %d's statics: %s", pe, strerror(errno));
      m = NULL;
    }
  }
  close(fd);
  return m;
}

/* gs_statics_map maps the statics of every peer whose heap is mapped here
 * (so on this host), reading their published words at offset off of their
 * heap, after the barrier that follows every PE's gs_statics_local. It
 * returns an error text when the PEs run different executables. */
const char *gs_statics_map(size_t off) {
  static char err[200];
  gs_dinfo_off = off;
  gs_dpeer = calloc((size_t)gs_npes, sizeof *gs_dpeer);
  if (!gs_dpeer) return "out of memory";
  if (region_fd < 0) return NULL; /* gs_dwhy says why */
  size_t size = region_hi - region_lo;
  for (int pe = 0; pe < gs_npes; pe++) {
    if (pe == gs_me || !gs_peer[pe]) continue;
    gs_dinfo d;
    memcpy(&d, gs_peer[pe] + off, sizeof d);
    if (d.magic != DINFO_MAGIC || d.size == 0) continue; /* that PE says why */
    if (d.size != size) {
      snprintf(err, sizeof err,
               "PE %d's static data is %llu bytes and this PE's %zu: statics are symmetric only between PEs that run the same executable",
               pe, (unsigned long long)d.size, size);
      return err;
    }
    gs_dpeer[pe] = map_peer(&d, pe);
  }
  gs_dpeer[gs_me] = (char *)region_lo;
  gs_dbase = (char *)region_lo;
  gs_dsize = size;
  return NULL;
}

/* gs_statics_fini unmaps the peers' statics (this process's own stay: the
 * program goes on using them). gs_setup has already set gs_npes to 0, so
 * no gs_at reaches the tables freed here. */
void gs_statics_fini(int npes) {
  size_t size = gs_dsize;
  char **peers = gs_dpeer;
  gs_dsize = 0;
  gs_dpeer = NULL;
  if (!peers) return;
  for (int pe = 0; pe < npes; pe++)
    if (peers[pe] && pe != gs_me) munmap(peers[pe], size);
  free(peers);
}
