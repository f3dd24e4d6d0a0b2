/* Option tables (see options.h): getopt_long's tables and the --help text
 * made from one table per command. */
#include "tool/options.h"
#include "analysis/model.h"
#include "trace.h"
#include "views/say.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* getopt_long's value of option i of a table without a short name: above
 * every short name. (An option with one gives its short name: getopt then
 * says "-h" of "--help=x".) */
#define LONG_VAL 256

static size_t count(const struct opp_option *opts)
{
    size_t n = 0;
    while (opts[n].type != OPP_OPTION_END)
        n++;
    return n;
}

static const struct opp_option *find(const struct opp_option *opts, size_t n, int ch)
{
    if (ch >= LONG_VAL && (size_t)(ch - LONG_VAL) < n)
        return &opts[ch - LONG_VAL];
    for (size_t i = 0; i < n; i++)
        if (opts[i].short_name && opts[i].short_name == ch)
            return &opts[i];
    return NULL;
}

/* o's argument stored as its kind says (options.h), or refused in the one
 * wording every command's numbers share: 0, or 2 said. */
static int number(const struct opp_command *c, const struct opp_option *o, const char *arg)
{
    int whole =
        o->kind == OPP_NUMBER_U32 || o->kind == OPP_NUMBER_U64 || o->kind == OPP_NUMBER_SIZE;
    double v;
    if (opp_option_number(arg, o->lo, o->hi, whole, &v)) {
        opp_say("opprof %s: --%s wants %s, not '%s'", c->name, o->long_name, o->wants, arg);
        return 2;
    }
    switch (o->kind) {
    case OPP_NUMBER_U32:
        *(uint32_t *)o->value = (uint32_t)v;
        break;
    case OPP_NUMBER_U64:
        *(uint64_t *)o->value = (uint64_t)v;
        break;
    case OPP_NUMBER_SIZE:
        *(size_t *)o->value = (size_t)v;
        break;
    case OPP_NUMBER_DOUBLE:
        *(double *)o->value = v;
        break;
    case OPP_NUMBER_MS_NS:
        *(uint64_t *)o->value = (uint64_t)(v * 1e6 + 0.5);
        break;
    case OPP_NUMBER_US_NS:
        *(double *)o->value = v * 1e3;
        break;
    }
    if (o->given)
        *o->given = 1;
    return 0;
}

/* A string option's argument stored, or refused when empty: 0, or 2
 * said. */
static int string(const struct opp_command *c, const struct opp_option *o, const char *arg)
{
    if (!*arg) {
        opp_say("opprof %s: --%s wants %s, not ''", c->name, o->long_name, o->argh);
        return 2;
    }
    *(const char **)o->value = arg;
    return 0;
}

/* What an option that takes a value was given so far. */
struct given {
    int times;       /* how often (an OPP_OPTION_OPTARG one may come without) */
    const char *arg; /* the first argument given, if any */
};

/* An option that keeps one value (every one that takes an argument, but
 * for OPP_OPTION_REPEATABLE), given arg after *g: refused when it was
 * given before, with a value either time, as neither can say which the
 * user meant (an output written to the last of two, a limit or a format
 * replaced, the first silently dropped). A flag given twice, or an
 * optional argument left out twice, is the same flag. 0, or 2 said. */
static int once(const struct opp_command *c, const struct opp_option *o, const char *arg,
                struct given *g)
{
    if (!o->argh || (o->flags & OPP_OPTION_REPEATABLE))
        return 0;
    if (g->times++ && (g->arg || arg)) {
        const char *a = g->arg, *b = arg;
        opp_say("opprof %s: --%s given twice (%s%s%s and %s%s%s): give it once", c->name,
                o->long_name, a ? "'" : "no ", a ? a : o->argh, a ? "'" : "", b ? "'" : "no ",
                b ? b : o->argh, b ? "'" : "");
        return 2;
    }
    if (!g->arg)
        g->arg = arg;
    return 0;
}

/* o's argument as the index of its word in o->choices, or refused: 0, or
 * 2 said. */
static int choice(const struct opp_command *c, const struct opp_option *o, const char *arg)
{
    char list[256] = "";
    for (int i = 0; o->choices[i]; i++) {
        if (!strcmp(arg, o->choices[i])) {
            *(int *)o->value = i;
            if (o->given)
                *o->given = 1;
            return 0;
        }
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", o->choices[i]);
    }
    opp_say("opprof %s: unknown %s '%s' (one of: %s)", c->name, o->long_name, arg, list);
    return 2;
}

/* Whether tok ("--name" or "--name=VALUE") gives o's whole long name: an
 * option left out of the help (one opprof passes itself) is not taken by
 * the start of its name, which a user may type meaning another. */
static int whole_name(const struct opp_option *o, const char *tok)
{
    size_t len = strlen(o->long_name);
    return !strncmp(tok, "--", 2) && !strncmp(tok + 2, o->long_name, len) &&
           (!tok[2 + len] || tok[2 + len] == '=');
}

/* A long option given as the start of several names, which getopt_long
 * refuses as it refuses an unknown one: "option '--li' is ambiguous
 * (--limit, --lib)", 2; else 0 (unknown, or the whole of a name). */
static int ambiguous(const struct opp_command *c, const char *arg)
{
    if (strncmp(arg, "--", 2))
        return 0;
    size_t len = strcspn(arg + 2, "=");
    char names[512] = "";
    int hits = 0;
    for (const struct opp_option *o = c->options; o->type != OPP_OPTION_END; o++) {
        if (!o->long_name || strncmp(o->long_name, arg + 2, len))
            continue;
        if (!o->long_name[len])
            return 0;
        size_t used = strlen(names);
        if (!(o->flags & OPP_OPTION_HIDDEN))
            snprintf(names + used, sizeof names - used, "%s--%s", used ? ", " : "", o->long_name);
        hits++;
    }
    if (hits < 2)
        return 0;
    opp_say("opprof %s: option '%.*s' is ambiguous (%s)", c->name, (int)len + 2, arg, names);
    return 2;
}

int opp_options_parse(const struct opp_command *c, int argc, char **argv, int *first)
{
    size_t n = count(c->options), k = 0;
    struct option lo[n + 1];
    char so[3 * n + 3];
    if (c->in_order)
        so[k++] = '+';
    so[k++] = ':'; /* our own messages: one line, opp_bad_option */
    for (size_t i = 0; i < n; i++) {
        const struct opp_option *o = &c->options[i];
        int has = !o->argh ? no_argument
                  : o->flags & OPP_OPTION_OPTARG ? optional_argument : required_argument;
        lo[i] = (struct option){o->long_name, has, NULL,
                                o->short_name ? o->short_name : LONG_VAL + (int)i};
        if (o->short_name) {
            so[k++] = (char)o->short_name;
            if (o->argh)
                so[k++] = ':';
        }
    }
    lo[n] = (struct option){NULL, 0, NULL, 0};
    so[k] = 0;
    struct given given[n + 1]; /* each option's, by its index */
    memset(given, 0, sizeof given);
    optind = 0; /* glibc: start afresh (a command may run more than once) */
    opterr = 0;
    int ch;
    int li;
    while ((li = -1, ch = getopt_long(argc, argv, so, lo, &li)) != -1) {
        const struct opp_option *o = find(c->options, n, ch);
        if (!o) /* ':' or an unknown option */
            return ch == '?' && !optopt && ambiguous(c, argv[optind - 1])
                       ? 2
                       : opp_bad_option(c->name, ch, argv);
        /* the option as given: before its value, or holding it after '=' */
        const char *tok =
            optarg && optarg == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];
        if (li >= 0 && (o->flags & OPP_OPTION_HIDDEN) && o->type != OPP_OPTION_HELP &&
            !whole_name(o, tok)) {
            opp_say("opprof %s: unknown option '%.*s' (see 'opprof %s --help')", c->name,
                    (int)strcspn(tok, "="), tok, c->name);
            return 2;
        }
        const char *arg = o->argh ? optarg : NULL;
        if ((o->flags & OPP_OPTION_OPTARG) && !arg && optind < argc && argv[optind][0] != '-' &&
            access(argv[optind], F_OK) != 0)
            arg = argv[optind++]; /* "--opt ARG": consumed like a required argument */
        if (once(c, o, arg, &given[o - c->options]))
            return 2; /* refused before it is stored or handled */
        switch (o->type) {
        case OPP_OPTION_FLAG:
            *(int *)o->value = 1;
            break;
        case OPP_OPTION_STRING:
            if (string(c, o, arg))
                return 2;
            break;
        case OPP_OPTION_CALLBACK:
            if (o->fn(o, arg))
                return 2;
            break;
        case OPP_OPTION_NUMBER:
            if (number(c, o, arg))
                return 2;
            break;
        case OPP_OPTION_CHOICE:
            if (choice(c, o, arg))
                return 2;
            break;
        case OPP_OPTION_HELP:
            opp_options_usage(c, stdout);
            return 1;
        case OPP_OPTION_END:
            break;
        }
    }
    *first = optind;
    return 0;
}

/* Each option: "  -s, --sort KEY" (or the long name alone, indented), its
 * help from column col (two spaces further when the name reaches it), and
 * the help's other lines at col. */
void opp_options_usage(const struct opp_command *c, FILE *f)
{
    fputs(c->usage, f);
    int pos = 0; /* columns written of an entry that shares its line */
    for (const struct opp_option *o = c->options; o->type != OPP_OPTION_END; o++) {
        if (o->flags & OPP_OPTION_HIDDEN)
            continue;
        if (pos)
            pos += fprintf(f, ", ");
        else if (o->short_name && !(o->flags & OPP_OPTION_UNLISTED_SHORT))
            pos += fprintf(f, "  -%c, ", o->short_name);
        else
            pos += fprintf(f, "%*s", c->long_indent ? c->long_indent : 6, "");
        pos += fprintf(f, "--%s", o->long_name);
        if (o->argh)
            pos += fprintf(f, o->flags & OPP_OPTION_OPTARG ? " [%s]" : " %s", o->argh);
        if (!o->help)
            continue; /* the next option's names follow on this line */
        int col = o->col ? o->col : c->col;
        fprintf(f, "%*s", pos <= col - 2 ? col - pos : 2, "");
        for (const char *s = o->help;; s++) {
            const char *nl = strchr(s, '\n');
            if (s != o->help)
                fprintf(f, "%*s", col, "");
            fwrite(s, 1, nl ? (size_t)(nl - s) : strlen(s), f);
            putc('\n', f);
            if (!nl)
                break;
            s = nl;
        }
        pos = 0;
    }
    if (c->epilogue)
        fputs(c->epilogue, f);
}

void opp_help_wrap(char *out, size_t cap, const char *text, size_t width)
{
    size_t n = 0, line = 0; /* bytes written; columns on the current line */
    for (;;) {
        while (*text == ' ')
            text++;
        size_t w = strcspn(text, " ");
        if (!w || n + w + 2 > cap)
            break;
        if (line && line + 1 + w > width) {
            out[n++] = '\n';
            line = 0;
        } else if (line) {
            out[n++] = ' ';
            line++;
        }
        memcpy(out + n, text, w);
        n += w, line += w, text += w;
    }
    out[n] = 0;
}

int opp_bad_option(const char *cmd, int c, char **argv)
{
    const char *arg = argv[optind - 1];
    if (c == ':')
        opp_say("opprof %s: option '%s' wants a value", cmd, arg);
    else if (optopt >= LONG_VAL) /* a value given to a long-only option that takes none */
        opp_say("opprof %s: option '%.*s' takes no value", cmd, (int)strcspn(arg, "="), arg);
    else if (optopt)
        opp_say("opprof %s: unknown option '-%c' (see 'opprof %s --help')", cmd, optopt, cmd);
    else
        opp_say("opprof %s: unknown option '%s' (see 'opprof %s --help')", cmd, arg, cmd);
    return 2;
}

int opp_option_number(const char *arg, double lo, double hi, int whole, double *out)
{
    /* strtod alone takes white space, a sign, hex, inf and nan */
    if (!(*arg >= '0' && *arg <= '9') && !(*arg == '.' && arg[1] >= '0' && arg[1] <= '9'))
        return -1;
    for (const char *p = arg; *p; p++)
        if (!strchr("0123456789.eE+-", *p) ||
            ((*p == '+' || *p == '-') && p[-1] != 'e' && p[-1] != 'E'))
            return -1;
    char *end;
    errno = 0;
    double d = strtod(arg, &end);
    if (errno || *end || !(d >= lo && d <= hi) || (whole && d != floor(d)))
        return -1;
    *out = d;
    return 0;
}

int opp_option_traces_merged(const char *cmd, const char *const *paths, size_t n)
{
    if (n > OPP_MODEL_MAX_TRACES) {
        opp_say("opprof %s: at most %d traces at a time", cmd, OPP_MODEL_MAX_TRACES);
        return 2;
    }
    return opp_option_traces_distinct(cmd, paths, n);
}

int opp_option_traces_distinct(const char *cmd, const char *const *paths, size_t n)
{
    char err[2 * PATH_MAX + 64];
    if (!opp_trace_distinct(paths, n, err, sizeof err))
        return 0;
    opp_say("opprof %s: %s", cmd, err);
    return 2;
}
