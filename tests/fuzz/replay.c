/* A main for the fuzz targets where clang's libFuzzer is missing: runs the
 * target once on each file named, and on each file of each folder named,
 * as libFuzzer's StandaloneFuzzTargetMain does, saying "Running: FILE"
 * first (UBSan's abort does not call a death callback, so the last such
 * line names the input that failed). Built with ASan and UBSan; a leak is
 * checked for after each input.
 *   replay/fuzz_NAME FILE|DIR... */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *prog;
static const char *current;

static void on_death(void)
{
    fprintf(stderr, "%s: failed on input %s\n", prog, current ? current : "(none)");
}

/* 0, or -1 when the file cannot be read or the target leaked on it. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *nd = realloc(data, cap);
            if (!nd) {
                fprintf(stderr, "%s: %s: out of memory\n", prog, path);
                free(data);
                fclose(f);
                return -1;
            }
            data = nd;
        }
        size_t got = fread(data + size, 1, cap - size, f);
        size += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read %s\n", prog, path);
        free(data);
        return -1;
    }
    /* an exact copy, so that ASan sees a read past the end */
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) {
        free(data);
        return -1;
    }
    memcpy(exact, data, size);
    free(data);
    current = path;
    fprintf(stderr, "Running: %s\n", path);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    if (__lsan_do_recoverable_leak_check()) {
        fprintf(stderr, "%s: memory leaked on input %s\n", prog, path);
        return -1;
    }
    current = NULL;
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", prog);
        return 2;
    }
    __sanitizer_set_death_callback(on_death);
    unsigned long runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, argv[i], strerror(errno));
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]))
                return 1;
            runs++;
            continue;
        }
        struct dirent **ents;
        int n = scandir(argv[i], &ents, NULL, by_name);
        if (n < 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, argv[i], strerror(errno));
            return 1;
        }
        int rc = 0;
        for (int k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], ents[k]->d_name);
            if (!rc && ents[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                rc = run_file(path);
                runs++;
            }
            free(ents[k]);
        }
        free(ents);
        if (rc)
            return 1;
    }
    printf("%s: %lu inputs, no failure\n", prog, runs);
    return 0;
}
