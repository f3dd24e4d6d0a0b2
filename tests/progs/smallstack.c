/* A thread made with the smallest stack a program may ask for (16 KiB,
 * or PTHREAD_STACK_MIN where that is more), which uses USE bytes of it:
 * prints "smallstack USE ok". The static TLS of every library loaded,
 * a preloaded one's too, comes out of that stack (no OpenBLAS here: its
 * own is larger than the stack). */
#include <alloca.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long use;

static void *run(void *arg)
{
    (void)arg;
    volatile char *buf = alloca((size_t)use);
    memset((char *)buf, 1, (size_t)use);
    return (void *)(long)buf[use - 1];
}

int main(int argc, char **argv)
{
    use = argc > 1 ? atol(argv[1]) : 1;
    if (use < 1)
        use = 1;
    size_t size = PTHREAD_STACK_MIN > 16384 ? PTHREAD_STACK_MIN : 16384;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, size);
    pthread_t t;
    int e = pthread_create(&t, &a, run, NULL);
    if (e) {
        printf("smallstack: pthread_create: %s\n", strerror(e));
        return 2;
    }
    void *r;
    pthread_join(t, &r);
    printf("smallstack %ld %s\n", use, r == (void *)1L ? "ok" : "wrong");
    return 0;
}
