/* The preload's string ids (NVTX messages, domains, registered strings):
 * the same bytes always get the same id, from OPP_STR_PRELOAD up, and the
 * collector has the STRING record (an OPP_MSG_GPU message) before the id is
 * used in any event. Lookups of known strings take no lock. */
#ifndef OPP_STRTAB_H
#define OPP_STRTAB_H

#include <stddef.h>
#include <stdint.h>

/* The id of s[0..n), 0 for NULL or when the table is full (said once). */
uint32_t opp_str_id(const char *s, size_t n);
/* The child of fork() is a process of its own: its ids start over. */
void opp_str_forked(void);
/* Keep the table's lock out of fork() (register once, before first use). */
void opp_str_atfork_prepare(void);
void opp_str_atfork_parent(void);

#endif
