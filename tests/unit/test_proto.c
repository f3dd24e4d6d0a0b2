/* The collector's message validation on well-formed and malformed input:
 * every rejection names its reason, nothing reads past the buffer. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buf.h"
#include "parse.h"
#include "ring.h"

static uint8_t buf[4096];

/* A hello: pid, ppid, clock, argc, two u64s, exe, argv. */
static uint32_t hello(uint32_t clock, uint32_t argc_claimed, int nargs, const char *exe)
{
    struct opp_wbuf w;
    opp_wbuf_init(&w, buf, sizeof buf);
    opp_put_u32(&w, 10);
    opp_put_u32(&w, 1);
    opp_put_u32(&w, clock);
    opp_put_u32(&w, argc_claimed);
    opp_put_u64(&w, 123);
    opp_put_u64(&w, 456);
    opp_put_str(&w, exe, strlen(exe));
    for (int i = 0; i < nargs; i++)
        opp_put_str(&w, "arg", 3);
    return (uint32_t)w.len;
}

START_TEST(header_rules)
{
    struct opp_msg_header h = {OPP_PROTO_MAGIC, OPP_MSG_HELLO, OPP_PROTO_VERSION, 10, 0}, out;
    const char *why = NULL;
    ck_assert_int_eq(opp_parse_header(&h, sizeof h, &out, &why), 0);
    ck_assert_int_eq(opp_parse_header(&h, sizeof h - 1, &out, &why), -1);
    ck_assert_str_eq(why, "short message header");
    struct opp_msg_header bad = h;
    bad.magic ^= 1;
    ck_assert_int_eq(opp_parse_header(&bad, sizeof bad, &out, &why), -1);
    ck_assert_str_eq(why, "bad message magic");
    bad = h;
    bad.version = OPP_PROTO_VERSION + 1;
    ck_assert_int_eq(opp_parse_header(&bad, sizeof bad, &out, &why), -1);
    ck_assert_str_eq(why, "unsupported protocol version");
    bad = h;
    bad.size = OPP_MSG_MAX + 1;
    ck_assert_int_eq(opp_parse_header(&bad, sizeof bad, &out, &why), -1);
    ck_assert_str_eq(why, "message too large");
    bad = h;
    bad.type = 16; /* a collector->client type */
    ck_assert_int_eq(opp_parse_header(&bad, sizeof bad, &out, &why), -1);
    ck_assert_str_eq(why, "unknown message type");
    bad = h;
    bad.reserved = 1;
    ck_assert_int_eq(opp_parse_header(&bad, sizeof bad, &out, &why), -1);
}
END_TEST

START_TEST(hello_rules)
{
    struct opp_hello h;
    const char *why = NULL;
    uint32_t n = hello(OPP_CLOCK_TSC, 2, 2, "/bin/app");
    ck_assert_int_eq(opp_parse_hello(buf, n, &h, &why), 0);
    ck_assert_uint_eq(h.pid, 10);
    ck_assert_uint_eq(h.argc, 2);
    ck_assert_str_eq(h.exe, "/bin/app");
    ck_assert_str_eq(h.argv[1], "arg");
    ck_assert_uint_eq(h.start_ticks, 123);
    opp_hello_free(&h);
    /* every prefix is rejected, never over-read */
    for (uint32_t k = 0; k < n; k++) {
        ck_assert_int_eq(opp_parse_hello(buf, k, &h, &why), -1);
        opp_hello_free(&h);
    }
    n = hello(7, 2, 2, "/bin/app");
    ck_assert_int_eq(opp_parse_hello(buf, n, &h, &why), -1);
    ck_assert_str_eq(why, "hello names an unknown clock");
    opp_hello_free(&h);
    n = hello(0, 1000000, 2, "/bin/app");
    ck_assert_int_eq(opp_parse_hello(buf, n, &h, &why), -1);
    ck_assert_str_eq(why, "hello has an impossible argument count");
    opp_hello_free(&h);
    n = hello(0, 1, 2, "/bin/app"); /* one more string than claimed */
    ck_assert_int_eq(opp_parse_hello(buf, n, &h, &why), -1);
    ck_assert_str_eq(why, "hello has trailing bytes");
    opp_hello_free(&h);
    n = hello(0, 0, 0, "/bin/a\0pp"); /* NUL inside a string */
    memcpy(buf + 32, "\x09\0\0\0", 4);
    memcpy(buf + 36, "/bin/a\0pp", 9);
    ck_assert_int_eq(opp_parse_hello(buf, 45, &h, &why), -1);
    ck_assert_str_eq(why, "hello has a bad executable path");
    opp_hello_free(&h);
}
END_TEST

/* A FUNCS part: entries first..first+count-1 of a table of total (two sent). */
static uint32_t funcs_part(uint32_t total, uint32_t first, uint32_t count, uint32_t kind,
                           const char *name)
{
    struct opp_wbuf w;
    opp_wbuf_init(&w, buf, sizeof buf);
    opp_put_u32(&w, total);
    opp_put_u32(&w, first);
    opp_put_u32(&w, count);
    for (uint32_t i = 0; i < 2; i++) {
        opp_put_u32(&w, kind);
        opp_put_u32(&w, OPP_DT_F64);
        opp_put_str(&w, "blas", 4);
        opp_put_str(&w, name, strlen(name));
    }
    return (uint32_t)w.len;
}

static uint32_t funcs(uint32_t count, uint32_t kind, const char *name)
{
    return funcs_part(count, 0, count, kind, name);
}

START_TEST(funcs_rules)
{
    struct opp_funcs_msg f;
    const char *why = NULL;
    uint32_t n = funcs(2, OPP_OP_GEMM, "cblas_dgemm");
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), 0);
    ck_assert_uint_eq(f.count, 2);
    ck_assert_str_eq(f.f[1].name, "cblas_dgemm");
    ck_assert_str_eq(f.f[1].lib, "blas");
    opp_funcs_free(&f);
    for (uint32_t k = 0; k < n; k++) {
        ck_assert_int_eq(opp_parse_funcs(buf, k, &f, &why), -1);
        opp_funcs_free(&f);
    }
    n = funcs(0, OPP_OP_GEMM, "x");
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), -1);
    ck_assert_str_eq(why, "function table has an impossible count");
    opp_funcs_free(&f);
    n = funcs(2, 99, "x");
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), -1);
    ck_assert_str_eq(why, "function table names an unknown kind or type");
    opp_funcs_free(&f);
    n = funcs(2, 0, "bad name\n");
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), -1);
    ck_assert_str_eq(why, "function table has a bad name");
    opp_funcs_free(&f);
    n = funcs(1, 0, "x"); /* table of one, two entries sent */
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), -1);
    ck_assert_str_eq(why, "function table has trailing bytes");
    opp_funcs_free(&f);
    n = funcs_part(10, 4, 2, 0, "x"); /* a middle part */
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), 0);
    ck_assert_uint_eq(f.total, 10);
    ck_assert_uint_eq(f.first, 4);
    ck_assert_uint_eq(f.count, 2);
    opp_funcs_free(&f);
    n = funcs_part(10, 9, 2, 0, "x"); /* past the end of the table */
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), -1);
    ck_assert_str_eq(why, "function table has an impossible count");
    opp_funcs_free(&f);
    n = funcs_part(OPP_MAX_FUNCS + 1, 0, 2, 0, "x");
    ck_assert_int_eq(opp_parse_funcs(buf, n, &f, &why), -1);
    ck_assert_str_eq(why, "function table has an impossible count");
    opp_funcs_free(&f);
}
END_TEST

START_TEST(ring_and_finish_rules)
{
    struct opp_ring_msg r;
    const char *why = NULL;
    uint32_t m[2] = {42, 1024};
    ck_assert_int_eq(opp_parse_ring(m, 8, &r, &why), 0);
    ck_assert_uint_eq(r.tid, 42);
    ck_assert_int_eq(opp_parse_ring(m, 7, &r, &why), -1);
    m[1] = 1000;
    ck_assert_int_eq(opp_parse_ring(m, 8, &r, &why), -1);
    ck_assert_str_eq(why, "ring capacity is not a power of two in range");
    m[1] = OPP_RING_MAX_RECS * 2;
    ck_assert_int_eq(opp_parse_ring(m, 8, &r, &why), -1);
    struct opp_finish_msg fin;
    uint32_t f[4] = {500, 77, 66, 0x0b};
    ck_assert_int_eq(opp_parse_finish(f, 4, &fin, &why), 0);
    ck_assert_uint_eq(fin.linger_ms, 500);
    ck_assert_uint_eq(fin.pid, 0);
    ck_assert_int_eq(opp_parse_finish(f, 16, &fin, &why), 0); /* with CMD's end */
    ck_assert_uint_eq(fin.pid, 77);
    ck_assert_uint_eq(fin.ppid, 66);
    ck_assert_uint_eq(fin.status, 0x0b);
    ck_assert_int_eq(opp_parse_finish(f, 8, &fin, &why), -1);
    ck_assert_str_eq(why, "finish message has the wrong size");
    f[1] = 0;
    ck_assert_int_eq(opp_parse_finish(f, 16, &fin, &why), -1);
    ck_assert_str_eq(why, "finish message names no process");
    f[0] = 4000000;
    ck_assert_int_eq(opp_parse_finish(f, 4, &fin, &why), -1);
}
END_TEST

/* Ring memory: the right size, sealed, with a header that matches. */
START_TEST(ring_memory_rules)
{
    struct opp_ring_msg m = {77, 1024};
    const char *why = NULL;
    size_t bytes = opp_ring_bytes(1024);
    int fd = (int)syscall(SYS_memfd_create, "t", MFD_ALLOW_SEALING);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)bytes), 0);
    ck_assert_ptr_null(opp_ring_map(fd, &m, &why));
    ck_assert_str_eq(why, "ring memory is not sealed against shrinking");
    ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    ck_assert_ptr_null(opp_ring_map(fd, &m, &why));
    ck_assert_str_eq(why, "ring header does not match its message");
    struct opp_ring_hdr *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    w->magic = OPP_RING_MAGIC;
    w->version = OPP_RING_VERSION;
    w->capacity = 1024;
    w->tid = 77;
    struct opp_ring_hdr *r = opp_ring_map(fd, &m, &why);
    ck_assert_ptr_nonnull(r);
    munmap(r, bytes);
    m.capacity = 2048; /* the message lies about the size */
    ck_assert_ptr_null(opp_ring_map(fd, &m, &why));
    ck_assert_str_eq(why, "ring memory has the wrong size");
    munmap(w, bytes);
    close(fd);
}
END_TEST

/* A REWIND record stands for the slots to its lap's end, no more, no
 * fewer, and only what was published. */
START_TEST(ring_rewind_records)
{
    static struct opp_rec ring[1024];
    struct opp_ring_rec rr;
    ring[1000] = (struct opp_rec){.flags = OPP_REC_REWIND, .arg0 = 24};
    ck_assert_int_eq(opp_ring_read(ring, 1024, 3 * 1024 + 1000, 30, 5, &rr), 0);
    ck_assert_uint_eq(rr.slots, 24);
    ck_assert_uint_eq(rr.nargs, 0);
    ck_assert_int_eq(opp_ring_read(ring, 1024, 1000, 23, 5, &rr), -1); /* not all published */
    ring[1000].arg0 = 23;                                             /* short of the lap's end */
    ck_assert_int_eq(opp_ring_read(ring, 1024, 1000, 30, 5, &rr), -1);
    ring[1000].arg0 = 24 + 1024; /* past it */
    ck_assert_int_eq(opp_ring_read(ring, 1024, 1000, 2000, 5, &rr), -1);
    ring[1000].arg0 = 0;
    ck_assert_int_eq(opp_ring_read(ring, 1024, 1000, 30, 5, &rr), -1);
}
END_TEST

Suite *suite_proto(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("validation");
    tcase_add_test(tc, header_rules);
    tcase_add_test(tc, hello_rules);
    tcase_add_test(tc, funcs_rules);
    tcase_add_test(tc, ring_and_finish_rules);
    tcase_add_test(tc, ring_memory_rules);
    tcase_add_test(tc, ring_rewind_records);
    suite_add_tcase(s, tc);
    return s;
}
