/* Fake cgroup v2 trees (fake_cgroup.h). */
#define _GNU_SOURCE /* nftw */
#include "fake_cgroup.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

bool cgroup_own_path(char *path, size_t size)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    REQUIRE_MSG(f, "open /proc/self/cgroup: %s", strerror(errno));
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(path, size, "%s", line + 3);
            found = true;
        }
    }
    fclose(f);
    return found;
}

void cgroup_make_dirs(const char *root, const char *cgroup_path, char leaf[PATH_MAX])
{
    int len = snprintf(leaf, PATH_MAX, "%s%s", root, cgroup_path);
    REQUIRE_MSG(len < PATH_MAX, "path too long");
    while (len > 0 && leaf[len - 1] == '/')
        leaf[--len] = '\0';
    for (char *p = leaf + strlen(root) + 1; p <= leaf + len; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        REQUIRE_MSG(mkdir(leaf, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", leaf, strerror(errno));
        *p = saved;
    }
}

void cgroup_write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    REQUIRE_MSG(f, "create %s: %s", path, strerror(errno));
    fputs(text, f);
    REQUIRE_MSG(fclose(f) == 0, "write %s", path);
}

void cgroup_remove_file(const char *dir, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    REQUIRE_MSG(unlink(path) == 0 || errno == ENOENT, "unlink %s: %s", path, strerror(errno));
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    remove(path);
    return 0;
}

void cgroup_remove_tree(const char *root)
{
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
