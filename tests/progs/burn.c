/* burn.c — a small multi-threaded CPU burner for live perf tests: leaf()
 * called directly and through an always-inline function, from mid(). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void leaf(int n){ for(int i=0;i<n*1000;i++) sink+=i*i; }
static inline __attribute__((always_inline)) void inl(int n){ for(int i=0;i<n*500;i++) sink^=i; leaf(n); }
__attribute__((noinline)) void mid(int n){ inl(n); leaf(n/2); }
void *worker(void *a){ for(int k=0;k<3000;k++) mid(k%7+1); return a; }
int main(void){ pthread_t t[3]; for(int i=0;i<3;i++) pthread_create(&t[i],0,worker,0); worker(0); for(int i=0;i<3;i++) pthread_join(t[i],0); printf("%lu\n",sink); return 0; }
