/* The report tool's messages on stderr, one line each. */
#ifndef OPP_SAY_H
#define OPP_SAY_H

/* One line of a message on stderr, fmt as printf's without the newline:
 * what it formats is written as text (fmt.h's opp_text_fput: a control
 * byte, a byte that is not UTF-8, a bidirectional control escaped), so
 * that a path or name the message quotes cannot make it two lines or
 * rewrite the terminal; then the newline. */
__attribute__((format(printf, 1, 2))) void opp_say(const char *fmt, ...);

#endif
