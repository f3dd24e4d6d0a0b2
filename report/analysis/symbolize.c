/* Symbolization of code stacks at report time (symbolize.h). */
#include "analysis/symbolize.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/demangle.h"
#include "analysis/loader.h"

#define PCS_MAX (OPP_GPU_FIELDS_MAX - 1)

struct stack {
    uint64_t key; /* process index << 32 | id */
    int n;
    uint64_t pc[PCS_MAX];
    char *name[PCS_MAX]; /* NULL until asked */
    int npy;
    uint32_t py_sid[PCS_MAX]; /* its Python frames' string ids, innermost first */
    UT_hash_handle hh;
};

struct module {
    uint32_t pi;
    uint64_t bias, start, end;
    char *path;
};

struct sym {
    uint64_t addr, size;
    const char *name; /* in the file's strtab copy */
};

struct elf {
    char *path;
    struct sym *syms; /* sorted by addr; NULL when the file cannot be read */
    size_t n;
    char *strs;
    UT_hash_handle hh;
};

struct opp_code {
    struct stack *stacks;
    struct module *mods;
    size_t nmods, cap;
    struct elf *elves;
};

int opp_code_add(struct opp_code **cp, uint32_t pi, const struct opp_gpu_rec *g, const char *path,
                 const char *const *py, const uint32_t *py_sid)
{
    if (!*cp && !(*cp = calloc(1, sizeof **cp)))
        return -1;
    struct opp_code *c = *cp;
    if (g->type == OPP_GPU_MODULE) {
        if (opp_loader_grow((void **)&c->mods, &c->cap, c->nmods + 1, sizeof *c->mods))
            return -1;
        struct module *m = &c->mods[c->nmods];
        m->pi = pi;
        m->bias = g->f[OPP_GF_MD_BIAS];
        m->start = g->f[OPP_GF_MD_START];
        m->end = g->f[OPP_GF_MD_END];
        if (!(m->path = strdup(path)))
            return -1;
        c->nmods++;
        return 0;
    }
    uint64_t key = (uint64_t)pi << 32 | (uint32_t)g->f[OPP_GF_ST_ID];
    struct stack *s;
    HASH_FIND(hh, c->stacks, &key, sizeof key, s);
    if (s || g->nfields < 2)
        return 0; /* the first one stands */
    if (!(s = calloc(1, sizeof *s)))
        return -1;
    s->key = key;
    s->n = (int)(g->nfields - 1 < PCS_MAX ? g->nfields - 1 : PCS_MAX);
    int oom = 0;
    for (int i = 0; i < s->n; i++) {
        s->pc[i] = g->f[OPP_GF_ST_PC0 + i];
        if (py && py[OPP_GF_ST_PC0 + i]) {
            if (!(s->name[i] = strdup(py[OPP_GF_ST_PC0 + i])))
                oom = 1;
            if (py_sid[OPP_GF_ST_PC0 + i] != UINT32_MAX)
                s->py_sid[s->npy++] = py_sid[OPP_GF_ST_PC0 + i];
        }
    }
    if (OPP_HASH_ADD(c->stacks, key, sizeof key, s)) {
        for (int i = 0; i < s->n; i++)
            free(s->name[i]);
        free(s);
        return -1;
    }
    return oom ? -1 : 0;
}

static int cmp_sym(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Read the function symbols of an ELF64 file: .symtab, else .dynsym. */
static void elf_read(struct elf *e)
{
    int fd = open(e->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    const uint8_t *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return;
    const Elf64_Ehdr *h = (const void *)p;
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_shentsize != sizeof(Elf64_Shdr) || h->e_shoff > len ||
        (size_t)h->e_shnum * sizeof(Elf64_Shdr) > len - h->e_shoff)
        goto out;
    const Elf64_Shdr *sh = (const void *)(p + h->e_shoff);
    const Elf64_Shdr *tab = NULL;
    for (int want = SHT_SYMTAB; !tab && want; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0)
        for (unsigned i = 0; i < h->e_shnum; i++)
            if (sh[i].sh_type == (unsigned)want && sh[i].sh_link < h->e_shnum) {
                tab = &sh[i];
                break;
            }
    if (!tab || tab->sh_offset > len || tab->sh_size > len - tab->sh_offset)
        goto out;
    const Elf64_Shdr *ss = &sh[tab->sh_link];
    if (ss->sh_offset > len || ss->sh_size > len - ss->sh_offset || !ss->sh_size)
        goto out;
    e->strs = malloc(ss->sh_size + 1);
    size_t nsym = tab->sh_size / sizeof(Elf64_Sym);
    e->syms = malloc((nsym ? nsym : 1) * sizeof *e->syms);
    if (!e->strs || !e->syms) {
        free(e->strs), free(e->syms);
        e->strs = NULL, e->syms = NULL;
        goto out;
    }
    memcpy(e->strs, p + ss->sh_offset, ss->sh_size);
    e->strs[ss->sh_size] = 0;
    const Elf64_Sym *sy = (const void *)(p + tab->sh_offset);
    for (size_t i = 0; i < nsym; i++) {
        unsigned t = ELF64_ST_TYPE(sy[i].st_info);
        if ((t != STT_FUNC && t != STT_GNU_IFUNC) || !sy[i].st_value ||
            sy[i].st_shndx == SHN_UNDEF || sy[i].st_name >= ss->sh_size)
            continue;
        e->syms[e->n++] = (struct sym){sy[i].st_value, sy[i].st_size, e->strs + sy[i].st_name};
    }
    qsort(e->syms, e->n, sizeof *e->syms, cmp_sym);
out:
    munmap((void *)p, len);
}

static const char *elf_lookup(struct opp_code *c, const char *path, uint64_t addr)
{
    struct elf *e;
    HASH_FIND_STR(c->elves, path, e);
    if (!e) {
        if (!(e = calloc(1, sizeof *e)) || !(e->path = strdup(path))) {
            free(e);
            return NULL;
        }
        elf_read(e);
        if (OPP_HASH_ADD_KEYPTR(c->elves, e->path, strlen(e->path),
                                e)) { /* unknown, as when e cannot be made */
            free(e->path), free(e->syms), free(e->strs);
            free(e);
            return NULL;
        }
    }
    size_t lo = 0, hi = e->n; /* the last symbol at or below addr */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return NULL;
    const struct sym *s = &e->syms[lo - 1];
    return addr < s->addr + (s->size ? s->size : 1) ? s->name : NULL;
}

static char *frame_name(struct opp_code *c, uint32_t pi, uint64_t pc)
{
    const struct module *m = NULL;
    for (size_t i = c->nmods; i-- > 0;) /* the latest that holds it */
        if (c->mods[i].pi == pi && pc >= c->mods[i].start && pc < c->mods[i].end) {
            m = &c->mods[i];
            break;
        }
    char buf[64];
    if (!m) {
        snprintf(buf, sizeof buf, "0x%" PRIx64, pc);
        return strdup(buf);
    }
    /* pc is a return address: the call is the byte before it */
    const char *name = m->path[0] ? elf_lookup(c, m->path, pc - 1 - m->bias) : NULL;
    if (name) {
        char *d = opp_demangle(name);
        return d ? d : strdup(name);
    }
    const char *base = strrchr(m->path, '/');
    base = base ? base + 1 : m->path[0] ? m->path : "?";
    size_t n = strlen(base) + 24;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s+0x%" PRIx64, base, pc - m->bias);
    return s;
}

int opp_code_frames(struct opp_code *c, uint32_t pi, uint32_t id, const char **names, int max)
{
    if (!c || !id)
        return 0;
    uint64_t key = (uint64_t)pi << 32 | id;
    struct stack *s;
    HASH_FIND(hh, c->stacks, &key, sizeof key, s);
    if (!s)
        return 0;
    int n = 0;
    for (int i = 0; i < s->n && n < max; i++) {
        if (!s->name[i] && !(s->name[i] = frame_name(c, pi, s->pc[i])))
            break;
        names[n++] = s->name[i];
    }
    return n;
}

int opp_code_pyframes(const struct opp_code *c, uint32_t pi, uint32_t id, uint32_t *sids, int max)
{
    if (!c || !id)
        return 0;
    uint64_t key = (uint64_t)pi << 32 | id;
    struct stack *s;
    HASH_FIND(hh, c->stacks, &key, sizeof key, s);
    int n = 0;
    for (int i = 0; s && i < s->npy && n < max; i++)
        sids[n++] = s->py_sid[i];
    return n;
}

void opp_code_free(struct opp_code *c)
{
    if (!c)
        return;
    struct stack *s, *st;
    HASH_ITER(hh, c->stacks, s, st) {
        HASH_DEL(c->stacks, s);
        for (int i = 0; i < s->n; i++)
            free(s->name[i]);
        free(s);
    }
    for (size_t i = 0; i < c->nmods; i++)
        free(c->mods[i].path);
    free(c->mods);
    struct elf *e, *et;
    HASH_ITER(hh, c->elves, e, et) {
        HASH_DEL(c->elves, e);
        free(e->path), free(e->syms), free(e->strs);
        free(e);
    }
    free(c);
}
