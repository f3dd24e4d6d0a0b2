/* Records sorted beyond memory: fixed-size records are added in any order
 * and come back in the order of cmp. Up to a memory budget they are
 * sorted in memory; past it each full buffer is sorted and written as a
 * run to one temporary file (in TMPDIR, else /tmp; unlinked at once),
 * each record as its differences from the one before it, and the runs
 * are merged as they are read back. What streams a large trace
 * uses to join records that meet in no order the trace promises (a GPU op
 * and the call that launched it). */
#ifndef OPP_EXTSORT_H
#define OPP_EXTSORT_H

#include <stddef.h>

struct opp_extsort;

/* In a comparator of records: return the order of a and b when they
 * differ, else go on to the next field. */
#define OPP_SORT_BY(a, b)                                                                          \
    if ((a) != (b))                                                                                \
    return (a) < (b) ? -1 : 1

/* rec_size bytes a record; mem_bytes for the in-memory buffer (at least
 * one record). NULL when out of memory. */
struct opp_extsort *opp_extsort_new(size_t rec_size, int (*cmp)(const void *, const void *),
                                    size_t mem_bytes);
/* 0, or -errno (the temporary file could not be made or written). */
int opp_extsort_add(struct opp_extsort *s, const void *rec);
/* No more records: the reading starts. 0 or -errno. */
int opp_extsort_done(struct opp_extsort *s);
/* The next record in order, valid until the next call; NULL at the end
 * or on an error (opp_extsort_error). */
const void *opp_extsort_next(struct opp_extsort *s);
/* The reading started again from the first record (after
 * opp_extsort_done). 0 or -errno. */
int opp_extsort_rewind(struct opp_extsort *s);
/* 0, or the -errno that stopped the reading. */
int opp_extsort_error(const struct opp_extsort *s);
/* Records added. */
size_t opp_extsort_count(const struct opp_extsort *s);
/* Bytes written to the temporary file (the runs, encoded). */
size_t opp_extsort_file_bytes(const struct opp_extsort *s);
void opp_extsort_free(struct opp_extsort *s);
/* Why a sort stopped (rc: its -errno) in err: "no room for temporary
 * files in DIR (...)", DIR being $TMPDIR or /tmp. */
void opp_extsort_no_room(char *err, size_t errlen, int rc);

#endif
