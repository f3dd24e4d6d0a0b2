/* An NVTX-annotated program of known structure (NVTX v3, header-only: no
 * GPU, no CUDA library). tests/e2e/test_nvtx.c checks its trace:
 *   nvtx-main:  "main" { 3 x "aten::conv2d, seq = N[, op_id = M]", "checkpoint" mark,
 *               "mydomain:registered-op" (category 7, payload 42) { L"wide-ränge" },
 *               "mydomain:dom-mark" mark, "local-range" (start/end) },
 *               "(unnamed range)" (a NULL message), a pop without push;
 *   nvtx-w0..2: 4 x "outer" { "inner", "inner" };
 *   nvtx-ender: "cross-thread", started by main, ended here;
 *   nvtx-deep:  200 nested "deep", then "A-default" and
 *               "mydomain:B-dom" overlapping, then "after".
 * The output is the same with or without a tool. `nvtx_app fork`: ranges
 * across fork(); `nvtx_app bench N` times N push/pop pairs; `nvtx_app die`:
 * "outer" { "mydomain:dying" { SIGKILL } }; `nvtx_app markjmp`: "before",
 * then a "lost" mark whose record a SIGSEGV handler jumps out of (the
 * process's ring's slots, when it has one, made read-only: its write
 * faults), then a "kept" mark; prints how often the handler ran;
 * `nvtx_app markinner`: the same with a "late" mark whose handler jumps
 * only within itself (sigsetjmp, siglongjmp) and returns. */
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#define WORKERS 3

static uint64_t spin(unsigned n)
{
    volatile uint64_t x = 1;
    for (unsigned i = 0; i < n * 1000u; i++)
        x = x * 6364136223846793005ull + i;
    return x & 0xff;
}

/* A range of domain d named msg pushed. */
static void push_in(nvtxDomainHandle_t d, const char *msg)
{
    nvtxEventAttributes_t e = {0};
    e.version = NVTX_VERSION;
    e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    e.messageType = NVTX_MESSAGE_TYPE_ASCII;
    e.message.ascii = msg;
    nvtxDomainRangePushEx(d, &e);
}

static uint32_t tid(void) { return (uint32_t)syscall(SYS_gettid); }

static uint64_t sums[WORKERS + 2];

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "nvtx-w%d", w);
    nvtxNameOsThreadA(tid(), name);
    uint64_t s = 0;
    for (int it = 0; it < 4; it++) {
        nvtxRangePushA("outer");
        s += spin(50);
        nvtxRangePushA("inner");
        s += spin(20);
        nvtxRangePop();
        nvtxRangePushA("inner");
        s += spin(20);
        nvtxRangePop();
        s += spin(10);
        nvtxRangePop();
    }
    sums[w] = s;
    return NULL;
}

static nvtxRangeId_t cross;

static void *ender(void *arg)
{
    nvtxNameOsThreadW(tid(), L"nvtx-ender");
    sums[WORKERS] = spin(30);
    nvtxRangeEnd(cross);
    nvtxRangeEnd(cross);          /* ended twice: the second is ignored */
    nvtxRangeEnd((nvtxRangeId_t)987654321); /* never started */
    return NULL;
}

static void *deep(void *arg)
{
    nvtxNameOsThreadA(tid(), "nvtx-deep");
    nvtxDomainHandle_t d = nvtxDomainCreateA("mydomain");
    for (int i = 0; i < 200; i++)
        nvtxRangePushA("deep");
    for (int i = 0; i < 200; i++)
        nvtxRangePop();
    /* Ranges of two domains ending out of order. */
    nvtxRangePushA("A-default");
    push_in(d, "B-dom");
    sums[WORKERS + 1] = spin(5);
    nvtxRangePop();       /* A, while B is open */
    nvtxDomainRangePop(d); /* B */
    nvtxRangePushA("after");
    nvtxRangePop();
    return NULL;
}

/* A child of fork() inherits the parent's open ranges, which are not its
 * own: its pop and end of them do nothing; its own ranges are recorded. */
static int forked(void)
{
    nvtxRangePushA("parent-outer");
    nvtxRangeId_t id = nvtxRangeStartA("parent-start");
    pid_t p = fork();
    if (p == 0) {
        nvtxRangePop();
        nvtxRangeEnd(id);
        nvtxRangePushA("child-range");
        nvtxRangePop();
        printf("child\n");
        return 0;
    }
    int st = 0;
    waitpid(p, &st, 0);
    nvtxRangeEnd(id);
    nvtxRangePop();
    printf("parent\n");
    return st;
}

/* markjmp: the slots of this process's one ring (past its 4096-byte
 * header, common/ring.h's OPP_RING_HDR_SIZE), made read-only; the
 * SIGSEGV handler makes them writable again and jumps back. */
static sigjmp_buf segv_jmp;
static char *ring_slots;
static size_t ring_slots_len;
static volatile sig_atomic_t segv_seen;
static void segv_jump(int sig)
{
    (void)sig;
    segv_seen++;
    mprotect(ring_slots, ring_slots_len, PROT_READ | PROT_WRITE);
    siglongjmp(segv_jmp, 1);
}

/* markinner: the handler's jump stays within it; it then returns into
 * the write that faulted, which the kernel runs again. */
static void segv_inner(int sig)
{
    (void)sig;
    static sigjmp_buf inner;
    segv_seen++;
    if (!sigsetjmp(inner, 0))
        siglongjmp(inner, 1);
    mprotect(ring_slots, ring_slots_len, PROT_READ | PROT_WRITE);
}

static int markjmp(int within)
{
    nvtxRangePushA("before");
    nvtxRangePop();
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;
    while (f && !ring_slots && fgets(line, sizeof line, f))
        if (strstr(line, "opprof-ring") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            ring_slots = (char *)lo + 4096;
            ring_slots_len = hi - lo - 4096;
        }
    if (f)
        fclose(f);
    struct sigaction sa = {.sa_handler = within ? segv_inner : segv_jump};
    sigaction(SIGSEGV, &sa, NULL);
    if (!sigsetjmp(segv_jmp, 1)) {
        if (ring_slots)
            mprotect(ring_slots, ring_slots_len, PROT_READ);
        nvtxMarkA(within ? "late" : "lost");
    }
    nvtxMarkA("kept");
    printf("%s segv %d\n", within ? "markinner" : "markjmp", (int)segv_seen);
    return 0;
}

static int bench(long n)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        nvtxRangePushA("bench");
        nvtxRangePop();
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("nvtx push/pop pair: %.1f ns\n", ns / (double)n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "fork"))
        return forked();
    if (argc == 2 && !strcmp(argv[1], "markjmp"))
        return markjmp(0);
    if (argc == 2 && !strcmp(argv[1], "markinner"))
        return markjmp(1);
    if (argc == 3 && !strcmp(argv[1], "bench"))
        return bench(atol(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "die")) {
        nvtxRangePushA("outer");
        push_in(nvtxDomainCreateA("mydomain"), "dying");
        raise(SIGKILL);
    }
    nvtxNameOsThreadA(tid(), "nvtx-main");
    nvtxNameOsThreadA(tid() + 100000, "not-a-thread"); /* another thread's id: ignored */
    nvtxNameCategoryA(7, "seven");
    nvtxRangePop(); /* nothing pushed */
    nvtxRangePushA(NULL);
    nvtxRangePop();

    uint64_t s = 0;
    nvtxRangePushA("main");
    nvtxRangePushA("aten::conv2d, seq = 12");
    s += spin(5);
    nvtxRangePop();
    nvtxRangePushA("aten::conv2d, seq = 13");
    s += spin(5);
    nvtxRangePop();
    nvtxRangePushA("aten::conv2d, seq = 14, op_id = 3");
    s += spin(5);
    nvtxRangePop();
    nvtxMarkA("checkpoint");

    nvtxDomainHandle_t d = nvtxDomainCreateA("mydomain");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(d, "registered-op");
    nvtxEventAttributes_t e = {0};
    e.version = NVTX_VERSION;
    e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    e.category = 7;
    e.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    e.payload.ullValue = 42;
    e.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    e.message.registered = reg;
    nvtxDomainRangePushEx(d, &e);
    nvtxRangePushW(L"wide-r\u00e4nge");
    s += spin(5);
    nvtxRangePop();
    nvtxDomainRangePop(d);
    nvtxEventAttributes_t m = {0};
    m.version = NVTX_VERSION;
    m.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    m.messageType = NVTX_MESSAGE_TYPE_ASCII;
    m.message.ascii = "dom-mark";
    nvtxDomainMarkEx(d, &m);

    nvtxRangeId_t local = nvtxRangeStartA("local-range");
    s += spin(5);
    nvtxRangeEnd(local);

    cross = nvtxRangeStartA("cross-thread");
    pthread_t t[WORKERS + 2];
    pthread_create(&t[WORKERS], NULL, ender, NULL);
    pthread_join(t[WORKERS], NULL);
    nvtxRangePop(); /* main */

    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    pthread_create(&t[WORKERS + 1], NULL, deep, NULL);
    pthread_join(t[WORKERS + 1], NULL);
    for (int i = 0; i < WORKERS + 2; i++)
        s += sums[i];
    printf("nvtx_app: %llu\n", (unsigned long long)s);
    return 0;
}
