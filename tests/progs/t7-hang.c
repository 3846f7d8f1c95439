/* t7-hang.c — a process that hangs in known ways, for pcollect --snapshot.
 * Built -O2 -g -fomit-frame-pointer by the tests.
 *
 *   t7-hang mutex     main blocks on a mutex held by thread "holder", which
 *                     sleeps inside hold_lock_and_sleep()
 *   t7-hang abba      threads "dl-a" and "dl-b" deadlock on two mutexes
 *   t7-hang chain     "chain-a" waits for a mutex held by "chain-b", which
 *                     waits for one held by "chain-c", which sleeps
 *   t7-hang kinds     one thread per primitive: PI mutex, rwlock (writer
 *                     holds, reader waits), condvar, semaphore, join
 *   t7-hang many N    N sleeping threads "sleeper-K", main in pause()
 *   t7-hang zombie    main calls pthread_exit (a zombie leader); "holder"
 *                     runs on, holding a mutex and sleeping
 *   t7-hang vfork     thread "vforker" is in vfork (uninterruptible: it
 *                     cannot stop) for 2 s; "holder" as in mutex
 *   t7-hang spin      main spins in spin_forever()
 *
 * Prints "main PID", the addresses of its locks ("m1 0x..."), one line
 * "name tid" per thread of interest, then "ready", and
 * hangs until killed.  Tests synchronise on /proc/PID/task/TID/syscall. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pi;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t cvm = PTHREAD_MUTEX_INITIALIZER;
static sem_t sem;
static pthread_barrier_t bar;
static volatile unsigned long sink;

static void announce(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	printf("%s %ld\n", name, (long)syscall(SYS_gettid));
	fflush(stdout);
}

__attribute__((noinline)) void hold_lock_and_sleep(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	pthread_barrier_wait(&bar);
	for (;;)
		sleep(1000);
}

__attribute__((noinline)) void take_both(pthread_mutex_t *first, pthread_mutex_t *second)
{
	pthread_mutex_lock(first);
	pthread_barrier_wait(&bar);
	pthread_mutex_lock(second);
	sink++;
}

__attribute__((noinline)) void lock_then_wait(pthread_mutex_t *mine, pthread_mutex_t *other)
{
	pthread_mutex_lock(mine);
	pthread_barrier_wait(&bar);
	pthread_mutex_lock(other);
	sink++;
}

static void *holder(void *a)
{
	announce("holder");
	hold_lock_and_sleep(&m1);
	return a;
}

static void *dl_a(void *a)
{
	announce("dl-a");
	take_both(&m1, &m2);
	return a;
}

static void *dl_b(void *a)
{
	announce("dl-b");
	take_both(&m2, &m1);
	return a;
}

static void *chain_a(void *a)
{
	announce("chain-a");
	pthread_barrier_wait(&bar); /* b and c hold theirs first */
	pthread_mutex_lock(&m1);
	return a;
}

static void *chain_b(void *a)
{
	announce("chain-b");
	lock_then_wait(&m1, &m2);
	return a;
}

static void *chain_c(void *a)
{
	announce("chain-c");
	hold_lock_and_sleep(&m2);
	return a;
}

__attribute__((noinline)) void sleep_in_sleeper(void)
{
	for (;;)
		sleep(1000);
}

static void *sleeper(void *a)
{
	char name[16];
	snprintf(name, sizeof name, "sleeper-%ld", (long)(size_t)a);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&bar);
	sleep_in_sleeper();
	return a;
}

/* kinds */
static void *pi_holder(void *a)
{
	announce("pi-holder");
	pthread_mutex_lock(&pi);
	pthread_barrier_wait(&bar);
	for (;;)
		sleep(1000);
	return a;
}

static void *pi_waiter(void *a)
{
	announce("pi-waiter");
	pthread_barrier_wait(&bar);
	pthread_mutex_lock(&pi);
	return a;
}

static void *rw_writer(void *a)
{
	announce("rw-writer");
	pthread_rwlock_wrlock(&rw);
	pthread_barrier_wait(&bar);
	for (;;)
		sleep(1000);
	return a;
}

static void *rw_reader(void *a)
{
	announce("rw-reader");
	pthread_barrier_wait(&bar);
	pthread_rwlock_rdlock(&rw);
	return a;
}

static void *cond_waiter(void *a)
{
	announce("cond-waiter");
	pthread_mutex_lock(&cvm);
	pthread_barrier_wait(&bar);
	for (;;)
		pthread_cond_wait(&cv, &cvm);
	return a;
}

static void *sem_waiter(void *a)
{
	announce("sem-waiter");
	pthread_barrier_wait(&bar);
	sem_wait(&sem);
	return a;
}

static void *forever(void *a)
{
	announce("forever");
	pthread_barrier_wait(&bar);
	for (;;)
		sleep(1000);
	return a;
}

static pthread_t forever_t;

static void *joiner(void *a)
{
	announce("joiner");
	pthread_barrier_wait(&bar);
	pthread_join(forever_t, NULL);
	return a;
}

static void *vforker(void *a)
{
	announce("vforker");
	pid_t c = vfork();
	if (c == 0) {
		/* the child: sleep without touching the parent's memory */
		struct timespec d = { 2, 0 };
		syscall(SYS_nanosleep, &d, NULL);
		_exit(0);
	}
	for (;;)
		sleep(1000);
	return a;
}

__attribute__((noinline)) void spin_forever(void)
{
	for (;;)
		sink += sink * 3 + 1;
}

static void start(void *(*fn)(void *), void *arg, pthread_t *out)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, arg)) {
		perror("pthread_create");
		exit(1);
	}
	if (out)
		*out = t;
}

__attribute__((noinline)) void main_blocked_on_mutex(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	sink++;
	pthread_mutex_unlock(m);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mutex";
	printf("main %d\nm1 %p\nm2 %p\npi %p\nrw %p\n", (int)getpid(), (void *)&m1, (void *)&m2, (void *)&pi,
	       (void *)&rw);
	if (!strcmp(mode, "mutex")) {
		pthread_barrier_init(&bar, NULL, 2);
		start(holder, NULL, NULL);
		pthread_barrier_wait(&bar);
		puts("ready");
		fflush(stdout);
		main_blocked_on_mutex(&m1);
	} else if (!strcmp(mode, "abba")) {
		pthread_barrier_init(&bar, NULL, 2);
		pthread_t a, b;
		start(dl_a, NULL, &a);
		start(dl_b, NULL, &b);
		puts("ready");
		fflush(stdout);
		pthread_join(a, NULL);
	} else if (!strcmp(mode, "chain")) {
		pthread_barrier_init(&bar, NULL, 3);
		pthread_t a;
		start(chain_c, NULL, NULL);
		start(chain_b, NULL, NULL);
		start(chain_a, NULL, &a);
		puts("ready");
		fflush(stdout);
		pthread_join(a, NULL);
	} else if (!strcmp(mode, "kinds")) {
		pthread_mutexattr_t at;
		pthread_mutexattr_init(&at);
		pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&pi, &at);
		sem_init(&sem, 0, 0);
		pthread_barrier_init(&bar, NULL, 9);
		start(pi_holder, NULL, NULL);
		start(pi_waiter, NULL, NULL);
		start(rw_writer, NULL, NULL);
		start(rw_reader, NULL, NULL);
		start(cond_waiter, NULL, NULL);
		start(sem_waiter, NULL, NULL);
		start(forever, NULL, &forever_t);
		start(joiner, NULL, NULL);
		pthread_barrier_wait(&bar);
		puts("ready");
		fflush(stdout);
		for (;;)
			pause();
	} else if (!strcmp(mode, "many")) {
		long n = argc > 2 ? atol(argv[2]) : 100;
		pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
		for (long i = 0; i < n; i++)
			start(sleeper, (void *)(size_t)i, NULL);
		pthread_barrier_wait(&bar);
		puts("ready");
		fflush(stdout);
		for (;;)
			pause();
	} else if (!strcmp(mode, "zombie")) {
		/* main exits alone: a zombie leader, its process runs on */
		pthread_barrier_init(&bar, NULL, 2);
		start(holder, NULL, NULL);
		pthread_barrier_wait(&bar);
		puts("ready");
		fflush(stdout);
		pthread_exit(NULL);
	} else if (!strcmp(mode, "vfork")) {
		/* thread "vforker" waits, uninterruptibly, for a vfork child that
		 * sleeps: it cannot stop until the child is gone */
		pthread_barrier_init(&bar, NULL, 2);
		start(holder, NULL, NULL);
		pthread_barrier_wait(&bar);
		start(vforker, NULL, NULL);
		puts("ready");
		fflush(stdout);
		for (;;)
			pause();
	} else if (!strcmp(mode, "spin")) {
		puts("ready");
		fflush(stdout);
		spin_forever();
	} else {
		fprintf(stderr, "usage: t7-hang mutex|abba|chain|kinds|many N|zombie|vfork|spin\n");
		return 2;
	}
	return 0;
}
