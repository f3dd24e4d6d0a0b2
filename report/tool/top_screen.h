/* `opprof top`'s full screen (ncurses): the view's text drawn over the
 * terminal, and keys. Without ncurses at build time, top_screen_open
 * fails and `opprof top` writes snapshots instead. */
#ifndef OPP_TOP_SCREEN_H
#define OPP_TOP_SCREEN_H

#include <stddef.h>

struct top_screen;

/* Whether the screen can be had: ncurses built in, stdin and stdout a
 * terminal that is not dumb. */
int top_screen_usable(void);
/* The terminal taken over, or NULL (no ncurses, not a terminal). */
struct top_screen *top_screen_open(void);
/* Its lines. */
size_t top_screen_lines(const struct top_screen *s);
/* text (lines) drawn from the top, cut at the screen's edges. */
void top_screen_draw(struct top_screen *s, const char *text, size_t len);
/* A key pressed within timeout_ms, else -1. */
int top_screen_key(struct top_screen *s, int timeout_ms);
/* The terminal as it was. */
void top_screen_close(struct top_screen *s);

#endif
