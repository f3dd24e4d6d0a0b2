/* One option table per command, in the manner of perf's parse-options.h:
 * each option's names, argument, help and handler written once; getopt_long's
 * tables and the --help text are made from it, and a bad option is said the
 * same way by every command. */
#ifndef OPP_OPTIONS_H
#define OPP_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct opp_option;

/* An option's handler: arg is its argument (NULL when it takes none).
 * 0 to go on; anything else is a usage error the handler has said. */
typedef int opp_option_fn(const struct opp_option *o, const char *arg);

enum opp_option_type {
    OPP_OPTION_END,
    OPP_OPTION_FLAG,     /* *(int *)value = 1 */
    OPP_OPTION_STRING,   /* *(const char **)value = the argument, given once and not empty */
    OPP_OPTION_CALLBACK, /* fn(o, argument) */
    OPP_OPTION_NUMBER,   /* the argument read by opp_option_number, stored as kind says */
    OPP_OPTION_CHOICE,   /* *(int *)value = the argument's index in choices */
    OPP_OPTION_HELP,     /* the command's --help */
};

enum {
    OPP_OPTION_HIDDEN = 1,       /* left out of the help */
    OPP_OPTION_UNLISTED_SHORT = 2, /* the short name works, the help shows only the long one */
    /* The argument may be left out (the handler gets NULL): it is
     * "--opt=ARG", or the next word when that is neither an option nor an
     * existing file (a trace); the help shows "--opt [ARG]". */
    OPP_OPTION_OPTARG = 4,
    /* An option with an argument that may be given more than once (each
     * argument handed to its handler in turn; its help says "repeatable");
     * any other is refused given twice (opp_options_parse). */
    OPP_OPTION_REPEATABLE = 8,
};

/* What an OPP_OPTION_NUMBER's value points to; the integer kinds take
 * whole numbers only. Its lo and hi are in the unit the option is given in,
 * within what the kind stores. */
enum opp_number_kind {
    OPP_NUMBER_U32,    /* uint32_t */
    OPP_NUMBER_U64,    /* uint64_t */
    OPP_NUMBER_SIZE,   /* size_t */
    OPP_NUMBER_DOUBLE, /* double */
    OPP_NUMBER_MS_NS,  /* milliseconds, stored as uint64_t nanoseconds, rounded (hi < 1.8e13) */
    OPP_NUMBER_US_NS,  /* microseconds, stored as double nanoseconds */
};

struct opp_option {
    enum opp_option_type type;
    int short_name; /* 0: none */
    const char *long_name;
    void *value;      /* what the option sets, or the handler's target */
    const char *argh; /* the argument's name in the help; NULL: the option takes none */
    /* One line per '\n'. NULL: the option shares the next one's line
     * ("--from MS, --to MS  ..."). */
    const char *help;
    opp_option_fn *fn;
    intptr_t data; /* for the handler */
    int flags;     /* OPP_OPTION_* */
    int col;       /* where this option's help begins, when not the command's */
    /* OPP_OPTION_NUMBER: what value points to, the least and the most
     * taken, what a refusal says it wants ("opprof CMD: --NAME wants WANTS,
     * not 'ARG'") and, when not NULL, a flag set to 1 when it is given. */
    enum opp_number_kind kind;
    double lo, hi;
    const char *wants;
    int *given;
    /* OPP_OPTION_CHOICE: the words it takes, NULL-ended; a refusal says
     * "opprof CMD: unknown NAME 'ARG' (one of: A, B)"; given as above. */
    const char *const *choices;
};

#define OPP_OPT_FLAG(s, l, v, h)                                                                   \
    {.type = OPP_OPTION_FLAG, .short_name = (s), .long_name = (l), .value = (v), .help = (h)}
#define OPP_OPT_STRING(s, l, v, a, h)                                                              \
    {.type = OPP_OPTION_STRING, .short_name = (s), .long_name = (l), .value = (v), .argh = (a),   \
     .help = (h)}
#define OPP_OPT_CALLBACK(s, l, v, a, h, f)                                                         \
    {.type = OPP_OPTION_CALLBACK, .short_name = (s), .long_name = (l), .value = (v),              \
     .argh = (a), .help = (h), .fn = (f)}
#define OPP_OPT_REPEATABLE(s, l, v, a, h, f)                                                       \
    {.type = OPP_OPTION_CALLBACK, .short_name = (s), .long_name = (l), .value = (v),              \
     .argh = (a), .help = (h), .fn = (f), .flags = OPP_OPTION_REPEATABLE}
#define OPP_OPT_NUMBER(s, l, v, a, h, k, lo_, hi_, w)                                              \
    OPP_OPT_NUMBER_GIVEN(s, l, v, NULL, a, h, k, lo_, hi_, w)
#define OPP_OPT_NUMBER_GIVEN(s, l, v, g, a, h, k, lo_, hi_, w)                                     \
    {.type = OPP_OPTION_NUMBER, .short_name = (s), .long_name = (l), .value = (v), .given = (g),  \
     .argh = (a), .help = (h), .kind = (k), .lo = (lo_), .hi = (hi_), .wants = (w)}
#define OPP_OPT_CHOICE(s, l, v, g, a, h, ...)                                                      \
    {                                                                                              \
        .type = OPP_OPTION_CHOICE, .short_name = (s), .long_name = (l), .value = (v),              \
        .given = (g), .argh = (a), .help = (h), .choices = (const char *const[])                   \
        {                                                                                          \
            __VA_ARGS__, NULL                                                                      \
        }                                                                                          \
    }
/* A macro's number as text, for a help or what a number option wants:
 * OPP_DIGITS(OPP_STACK_MAX) is "16". */
#define OPP_DIGITS_(x) #x
#define OPP_DIGITS(x) OPP_DIGITS_(x)
#define OPP_OPT_HELP(h) {.type = OPP_OPTION_HELP, .short_name = 'h', .long_name = "help", .help = (h)}
#define OPP_OPT_END() {.type = OPP_OPTION_END}

/* A command's options and the help text around them. */
struct opp_command {
    const char *name;     /* "report": bad options are said as "opprof report: ..." */
    const char *usage;    /* the help before the options (synopsis, description) */
    const char *epilogue; /* the help after them; NULL: none */
    int col;              /* where the options' help begins */
    int long_indent;      /* columns before an option without a short name (0: 6, as if
                             it had one; run: 2) */
    int in_order;         /* options end at the first operand (run: CMD's own follow) */
    const struct opp_option *options; /* ended by OPP_OPT_END() */
};

/* Parse argv[1..] by c's table, each option in order: set, stored or its
 * handler called. For every command, an option that takes a value (a
 * string, a number, a choice, a callback's argument) given twice is a
 * usage error, even with the same value ("opprof CMD: --NAME given twice
 * ('A' and 'B'): give it once"; an optional argument left out is said
 * "no ARG"), but for an OPP_OPTION_REPEATABLE one; a flag given twice is
 * the flag. A string option given '' is one too ("opprof CMD: --NAME
 * wants ARG, not ''").
 * 0 with *first the index of the first operand; 1 when --help was shown (on
 * stdout); 2 on a usage error (said on stderr). */
int opp_options_parse(const struct opp_command *c, int argc, char **argv, int *first);

/* The help: c's usage, one entry per option not hidden, its epilogue. */
void opp_options_usage(const struct opp_command *c, FILE *f);

/* An option's number: arg written in decimal (digits, one '.', an
 * exponent; no sign, no hex, no inf or nan), from lo to hi, whole when
 * whole is set. 0 and *out, or -1 (the caller says why, as it names the
 * option). Every command reads its numbers with it: an OPP_OPTION_NUMBER
 * through the parser, a number within an argument (--set NAME=VALUE)
 * itself. */
int opp_option_number(const char *arg, double lo, double hi, int whole, double *out);

/* The operands that name traces, paths[0..n), name n files
 * (opp_trace_distinct): 0, or 2, the usage exit code, with it said as
 * "opprof CMD: A and B are the same trace: give it once". */
int opp_option_traces_distinct(const char *cmd, const char *const *paths, size_t n);
/* The same for traces read as one (merged: report, export), which are
 * also at most OPP_MODEL_MAX_TRACES: "opprof CMD: at most 256 traces at a
 * time". */
int opp_option_traces_merged(const char *cmd, const char *const *paths, size_t n);

/* A help made at run time (from a list) as lines of at most width columns,
 * broken at spaces, into out (cap bytes, at least strlen(text) + 1). */
void opp_help_wrap(char *out, size_t cap, const char *text, size_t width);

/* One line on stderr, "opprof CMD: option '--x' wants a value" (getopt's
 * c == ':'), "option '--x' takes no value" or "unknown option ..."; returns
 * 2, the usage exit code. */
int opp_bad_option(const char *cmd, int c, char **argv);

#endif
