/* `opprof top`'s full screen with ncurses (top_screen.h). */
#include "tool/top_screen.h"

#include <stdlib.h>

#ifdef OPP_HAVE_NCURSES
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

struct top_screen {
    WINDOW *w;
    int utf8; /* characters drawn as they are: wide ncurses in a UTF-8 locale */
};

/* Signals that end us whose default ncurses leaves be (it restores the
 * terminal on SIGINT and SIGTERM): Ctrl-backslash, a hangup or `kill -HUP`. */
static const int ending[] = {SIGQUIT, SIGHUP};
static struct sigaction was[sizeof ending / sizeof *ending];

/* The terminal as it was (its own screen, the cursor, echo), then the
 * signal's default: as ncurses does for SIGTERM. */
static void restore_and_end(int sig)
{
    endwin();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A terminal's, and in its foreground: a background job (`&`, `timeout`
 * without --foreground) that set the terminal up would be stopped
 * (SIGTTOU), and CMD with it, as its process group's; it takes the plain
 * tables. */
int top_screen_usable(void)
{
    const char *term = getenv("TERM");
    return isatty(0) && isatty(1) && tcgetpgrp(1) == getpgrp() && term && *term &&
           strcmp(term, "dumb");
}

struct top_screen *top_screen_open(void)
{
    if (!top_screen_usable())
        return NULL;
    struct top_screen *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    /* the terminal's encoding, for ncurses to draw a character, not its bytes */
    setlocale(LC_CTYPE, "");
#ifdef OPP_HAVE_NCURSESW
    wchar_t wc;
    s->utf8 = mbrtowc(&wc, "\xc3\xa4", 2, &(mbstate_t){0}) == 2 && wc == 0xe4;
#endif
    if (!(s->w = initscr())) {
        free(s);
        return NULL;
    }
    cbreak();
    noecho();
    curs_set(0);
    keypad(stdscr, TRUE);
    for (size_t i = 0; i < sizeof ending / sizeof *ending; i++) {
        struct sigaction sa = {.sa_handler = restore_and_end};
        sigaction(ending[i], NULL, &was[i]);
        if (was[i].sa_handler == SIG_DFL) /* not one ignored, or another's */
            sigaction(ending[i], &sa, NULL);
    }
    return s;
}

size_t top_screen_lines(const struct top_screen *s)
{
    (void)s;
    return LINES > 0 ? (size_t)LINES : 0;
}

/* Line y: the n bytes of UTF-8 at p (the view's text: escaped, so valid) up
 * to the screen's width. A character as it is where it can be drawn
 * (s->utf8), else as '?': one column each way, as the view counts them
 * (a narrow ncurses would show each of its bytes as two, "~X"). */
static void draw_line(const struct top_screen *s, int y, const char *p, size_t n)
{
    move(y, 0);
    int col = 0;
    for (size_t i = 0, k; i < n && col < COLS; i += k) {
        wchar_t wc = (unsigned char)p[i];
        k = 1;
        if (wc >= 0x80) {
            mbstate_t st = {0};
            k = s->utf8 ? mbrtowc(&wc, p + i, n - i, &st) : 0;
            if (k == 0 || k > n - i) { /* not drawable here: '?' for its bytes */
                for (k = 1; i + k < n && ((unsigned char)p[i + k] & 0xc0) == 0x80; k++)
                    ;
                wc = '?';
            }
        }
        int w = wc < 0x80 ? 1 : wcwidth(wc);
        if (w < 0 || col + w > COLS)
            break;
        addnstr(wc == '?' ? "?" : p + i, wc == '?' ? 1 : (int)k);
        col += w;
    }
}

void top_screen_draw(struct top_screen *s, const char *text, size_t len)
{
    erase();
    int y = 0;
    for (size_t i = 0; i < len && y < LINES;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - text) - i : len - i;
        draw_line(s, y++, text + i, n);
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
    for (size_t i = 0; i < sizeof ending / sizeof *ending; i++)
        sigaction(ending[i], &was[i], NULL);
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
size_t top_screen_lines(const struct top_screen *s)
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
