/* Fake cgroup v2 trees, for tests of container limits read through an
 * explicit root (COREALLOC_CGROUP_ROOT): directories that mirror this
 * process's cgroup path, holding the limit files a test writes. */
#ifndef COREALLOC_TEST_FAKE_CGROUP_H
#define COREALLOC_TEST_FAKE_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* This process's cgroup v2 path (the "0::<path>" line of /proc/self/cgroup);
 * false without one. */
bool cgroup_own_path(char *path, size_t size);
/* Creates root + cgroup_path one directory at a time; leaf gets its path. */
void cgroup_make_dirs(const char *root, const char *cgroup_path, char leaf[PATH_MAX]);
void cgroup_write_file(const char *dir, const char *name, const char *text);
void cgroup_remove_file(const char *dir, const char *name);
/* Removes root and everything below it, never stepping into a mount. */
void cgroup_remove_tree(const char *root);

#endif
