/* `opprof top`'s full screen with ncurses (top_screen.h). */
#include "tool/top_screen.h"

#include <stdlib.h>

#ifdef OPP_HAVE_NCURSES
#include <ncurses.h>
#include <string.h>
#include <unistd.h>

#define AROUND 9 /* the lines that are not table rows: counts, headings, rules, keys */

struct top_screen {
    WINDOW *w;
};

int top_screen_usable(void)
{
    const char *term = getenv("TERM");
    return isatty(0) && isatty(1) && term && *term && strcmp(term, "dumb");
}

struct top_screen *top_screen_open(void)
{
    if (!top_screen_usable())
        return NULL;
    struct top_screen *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (!(s->w = initscr())) {
        free(s);
        return NULL;
    }
    cbreak();
    noecho();
    curs_set(0);
    keypad(stdscr, TRUE);
    return s;
}

size_t top_screen_rows(const struct top_screen *s)
{
    (void)s;
    return LINES > AROUND + 1 ? (size_t)(LINES - AROUND) : 1;
}

void top_screen_draw(struct top_screen *s, const char *text, size_t len)
{
    (void)s;
    erase();
    int y = 0;
    for (size_t i = 0; i < len && y < LINES;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - text) - i : len - i;
        mvaddnstr(y++, 0, text + i, (int)(n < (size_t)COLS ? n : (size_t)COLS));
        i += n + 1;
    }
    refresh();
}

int top_screen_key(struct top_screen *s, int timeout_ms)
{
    (void)s;
    timeout(timeout_ms);
    int k = getch();
    return k == ERR ? -1 : k;
}

void top_screen_close(struct top_screen *s)
{
    if (!s)
        return;
    endwin();
    free(s);
}

#else /* no ncurses: snapshots only */

int top_screen_usable(void)
{
    return 0;
}
struct top_screen *top_screen_open(void)
{
    return NULL;
}
size_t top_screen_rows(const struct top_screen *s)
{
    (void)s;
    return 0;
}
void top_screen_draw(struct top_screen *s, const char *text, size_t len)
{
    (void)s, (void)text, (void)len;
}
int top_screen_key(struct top_screen *s, int timeout_ms)
{
    (void)s, (void)timeout_ms;
    return -1;
}
void top_screen_close(struct top_screen *s)
{
    (void)s;
}

#endif
