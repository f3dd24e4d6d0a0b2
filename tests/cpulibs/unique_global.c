/* unique_global SRC DST: a copy of the shared library SRC whose GNU unique
 * symbols are plain global ones. glibc never unloads a library that
 * defines a unique symbol (a C++ function-local static of an inline
 * function or template: Debian's libdnnl.so.2 has three of libstdc++'s);
 * the copy, the same code, is unloaded by dlclose, so that the plugin host
 * (tests/progs/unload.c) can load oneDNN elsewhere. Built and run by
 * tests/cpulibs.mk. */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: unique_global SRC DST\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    unsigned char *b = NULL;
    long n = -1;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > (long)sizeof(Elf64_Ehdr) &&
        !fseek(f, 0, SEEK_SET) && (b = malloc((size_t)n)) && fread(b, 1, (size_t)n, f) != (size_t)n)
        n = -1;
    if (f)
        fclose(f);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
    if (!b || n < 0 || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)n) {
        fprintf(stderr, "unique_global: %s: not a 64-bit ELF file\n", argv[1]);
        return 1;
    }
    unsigned changed = 0;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff) + i;
        if (sh->sh_type != SHT_DYNSYM || sh->sh_offset + sh->sh_size > (uint64_t)n)
            continue;
        Elf64_Sym *sym = (Elf64_Sym *)(b + sh->sh_offset);
        for (size_t k = 0; k < sh->sh_size / sizeof *sym; k++)
            if (ELF64_ST_BIND(sym[k].st_info) == STB_GNU_UNIQUE) {
                sym[k].st_info = ELF64_ST_INFO(STB_GLOBAL, ELF64_ST_TYPE(sym[k].st_info));
                changed++;
            }
    }
    FILE *o = fopen(argv[2], "wb");
    int bad = !o || fwrite(b, 1, (size_t)n, o) != (size_t)n;
    if ((o && fclose(o)) || bad) {
        fprintf(stderr, "unique_global: cannot write %s\n", argv[2]);
        return 1;
    }
    free(b);
    printf("unique_global: %s: %u unique symbols made global\n", argv[2], changed);
    return 0;
}
