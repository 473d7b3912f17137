/* gaps: how much of a busy CPU's time the machine takes away, with and
 * without another thread on that CPU that wakes every 20 us (as the Go
 * runtime's sysmon does for about a millisecond after a process was idle).
 *
 * A thread bound to CPU 1 reads the clock for one second and counts the
 * gaps between reads longer than 1 us, by length, and their sum. With an
 * argument, a second thread bound to the same CPU sleeps 20 us in a loop.
 * bench/NOTES.md ("the 2-PE barrier") quotes the figures from the 2-core
 * VMs: what one wake-up of another thread costs the busy one there.
 *
 *   gcc -O2 -pthread -o /tmp/gaps bench/vmgaps/gaps.c
 *   /tmp/gaps; /tmp/gaps sleeper
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static atomic_int stop;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void bind_to(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *sleeper(void *arg) {
  long *woke = arg;
  bind_to(1);
  struct timespec d = {0, 20000};
  while (!atomic_load(&stop)) {
    nanosleep(&d, 0);
    (*woke)++;
  }
  return 0;
}

int main(int argc, char **argv) {
  static const double bound[] = {2e3, 5e3, 10e3, 20e3, 50e3};
  static const char *label[] = {"1-2", "2-5", "5-10", "10-20", "20-50", ">50"};
  long hist[6] = {0}, woke = 0;
  pthread_t t;
  int with = argc > 1;
  if (with) pthread_create(&t, 0, sleeper, &woke);
  bind_to(1);
  double t0 = now_ns(), last = t0, lost = 0, worst = 0;
  while (last - t0 < 1e9) {
    double x = now_ns(), gap = x - last;
    last = x;
    if (gap <= 1e3) continue;
    lost += gap;
    if (gap > worst) worst = gap;
    int b = 0;
    while (b < 5 && gap >= bound[b]) b++;
    hist[b]++;
  }
  atomic_store(&stop, 1);
  if (with) pthread_join(t, 0);
  printf("sleeper %s (woke %ld times): gaps over 1 us by length (us):", with ? "on" : "off", woke);
  for (int b = 0; b < 6; b++) printf(" %s %ld", label[b], hist[b]);
  printf("; lost %.1f ms of 1000, longest %.1f us\n", lost / 1e6, worst / 1e3);
  return 0;
}
