/* Container limits. A fake cgroup v2 tree that mirrors this process's cgroup
 * path, read through an explicit root: leaf and ancestor limits, "max",
 * missing files, cpu.max. The real system: sane values, errno kept. Then, in
 * a private mount namespace when we may create one (root): a fake
 * /proc/self/cgroup that puts us below the root, the v1 fallback, and the v2
 * tree found through /proc/self/mountinfo at an escaped mount point after an
 * overlong line. */
#include "platform/container.h"
#include "check.h"
#include "fake_cgroup.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)
#define SKIPPED 77
#define MAX_CGROUP_MOUNTS 64

static unsigned affinity_count(void)
{
    cpu_set_t set;
    REQUIRE_MSG(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity: %s", strerror(errno));
    return (unsigned)CPU_COUNT(&set);
}

/* container_read, checking what must hold on every call. */
static struct container_limits read_limits(const char *cgroup_root)
{
    struct container_limits l;
    memset(&l, 0xa5, sizeof l); /* every field must be written */
    errno = 4242;
    container_read(cgroup_root, &l);
    CHECK_MSG(errno == 4242, "errno changed to %d", errno);
    CHECK_MSG(l.cpus_allowed >= 1 && l.cpus_allowed == affinity_count(), "cpus_allowed %u, affinity %u",
          l.cpus_allowed, affinity_count());
    CHECK_MSG(l.cgroup_version >= 0 && l.cgroup_version <= 2, "cgroup_version %d", l.cgroup_version);
    return l;
}

static void check_limits(struct container_limits l, int version, size_t max, size_t high,
                         unsigned quota, const char *what)
{
    CHECK_MSG(l.cgroup_version == version && l.memory_max == max && l.memory_high == high &&
              l.cpu_quota == quota,
          "%s: got version %d max %zu high %zu quota %u, want %d %zu %zu %u", what, l.cgroup_version,
          l.memory_max, l.memory_high, l.cpu_quota, version, max, high, quota);
}

/* The v2 rules on a fake tree whose directories mirror cgroup_path, read
 * through cgroup_root: the tree itself, or NULL when a cgroup2 line of
 * mountinfo leads to it. */
static void check_v2_tree(const char *tree, const char *cgroup_path, const char *cgroup_root)
{
    char leaf[PATH_MAX], parent[PATH_MAX];
    cgroup_make_dirs(tree, cgroup_path, leaf);
    bool has_parent = strlen(leaf) > strlen(tree);
    snprintf(parent, sizeof parent, "%s", leaf);
    if (has_parent)
        *strrchr(parent, '/') = '\0';

    check_limits(read_limits(cgroup_root), 2, 0, 0, 0, "missing files");
    cgroup_write_file(leaf, "memory.max", "max\n");
    cgroup_write_file(leaf, "memory.high", "max\n");
    cgroup_write_file(leaf, "cpu.max", "max 100000\n");
    check_limits(read_limits(cgroup_root), 2, 0, 0, 0, "max everywhere");
    cgroup_write_file(leaf, "memory.max", "104857600\n");
    cgroup_write_file(leaf, "memory.high", "52428800\n");
    cgroup_write_file(leaf, "cpu.max", "150000 100000\n");
    check_limits(read_limits(cgroup_root), 2, 100 * MiB, 50 * MiB, 2, "leaf limits");
    cgroup_write_file(leaf, "cpu.max", "100000 100000\n");
    check_limits(read_limits(cgroup_root), 2, 100 * MiB, 50 * MiB, 1, "exactly one CPU");

    if (has_parent) {
        cgroup_write_file(parent, "memory.max", "209715200\n");
        cgroup_write_file(parent, "cpu.max", "250000 100000\n");
        check_limits(read_limits(cgroup_root), 2, 100 * MiB, 50 * MiB, 1, "leaf below parent");
        cgroup_write_file(parent, "memory.max", "31457280\n");
        cgroup_write_file(parent, "memory.high", "10485760\n");
        cgroup_write_file(parent, "cpu.max", "50000 100000\n");
        cgroup_write_file(leaf, "cpu.max", "150000 100000\n");
        check_limits(read_limits(cgroup_root), 2, 30 * MiB, 10 * MiB, 1, "parent below leaf");
        cgroup_write_file(leaf, "memory.max", "max\n");
        cgroup_write_file(leaf, "cpu.max", "max 100000\n");
        cgroup_write_file(parent, "cpu.max", "250000 100000\n");
        check_limits(read_limits(cgroup_root), 2, 30 * MiB, 10 * MiB, 3, "parent under unlimited leaf");
        cgroup_write_file(tree, "memory.max", "20971520\n"); /* the mount point counts too */
        check_limits(read_limits(cgroup_root), 2, 20 * MiB, 10 * MiB, 3, "limit at the mount point");
        cgroup_remove_file(tree, "memory.max");
        cgroup_remove_file(parent, "memory.max");
        cgroup_remove_file(parent, "memory.high");
        cgroup_remove_file(parent, "cpu.max");
    } else {
        printf("  cgroup %s is the root: no ancestor checks on this tree\n", cgroup_path);
    }
    cgroup_remove_file(leaf, "memory.max");
    cgroup_remove_file(leaf, "memory.high");
    cgroup_remove_file(leaf, "cpu.max");
    check_limits(read_limits(cgroup_root), 2, 0, 0, 0, "files removed");
}

/* The mountinfo escapes: "\040" is a space. */
static void unescape(char *s)
{
    char *out = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
            s[3] <= '7') {
            *out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *out++ = *s;
        }
    }
    *out = '\0';
}

struct cgroup_mounts {
    int count;
    char point[MAX_CGROUP_MOUNTS][PATH_MAX];
    char type[MAX_CGROUP_MOUNTS][64];
    char options[MAX_CGROUP_MOUNTS][1024];
    size_t longest_line;
    bool escaped_cgroup2; /* a cgroup2 mount point with \040, \011 and \134 */
};

static bool has_option(const char *options, const char *word)
{
    char list[1030];
    char item[64];
    snprintf(list, sizeof list, ",%s,", options);
    snprintf(item, sizeof item, ",%s,", word);
    return strstr(list, item) != NULL;
}

static void list_cgroup_mounts(struct cgroup_mounts *m)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    REQUIRE_MSG(f, "open mountinfo: %s", strerror(errno));
    memset(m, 0, sizeof *m);
    char *line = NULL;
    size_t capacity = 0;
    ssize_t len;
    while ((len = getline(&line, &capacity, f)) > 0) {
        if ((size_t)len > m->longest_line)
            m->longest_line = (size_t)len;
        char point[PATH_MAX * 4], type[64], options[1024];
        const char *tail = strstr(line, " - ");
        if (!tail || sscanf(line, "%*s %*s %*s %*s %16383s", point) != 1 ||
            sscanf(tail, " - %63s %*s %1023s", type, options) != 2)
            continue;
        if (strcmp(type, "cgroup") != 0 && strcmp(type, "cgroup2") != 0)
            continue;
        if (strcmp(type, "cgroup2") == 0 && strstr(point, "\\040") && strstr(point, "\\011") &&
            strstr(point, "\\134"))
            m->escaped_cgroup2 = true;
        REQUIRE_MSG(m->count < MAX_CGROUP_MOUNTS, "too many cgroup mounts");
        unescape(point);
        REQUIRE_MSG(strlen(point) < PATH_MAX, "cgroup mount point too long");
        memcpy(m->point[m->count], point, strlen(point) + 1);
        memcpy(m->type[m->count], type, sizeof type);
        memcpy(m->options[m->count], options, sizeof options);
        m->count++;
    }
    free(line);
    fclose(f);
}

static void bind(const char *from, const char *to)
{
    REQUIRE_MSG(mount(from, to, NULL, MS_BIND, NULL) == 0, "bind %s on %s: %s", from, to, strerror(errno));
}

static void make_dir(const char *path)
{
    REQUIRE_MSG(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
}

/* The v1 hierarchy holding `controller` is bound at scratch/<name>, with a
 * fake tree (scratch/<name>-tree) bound over it; false without one. */
static bool fake_v1_hierarchy(const struct cgroup_mounts *m, const char *controller,
                              const char *scratch, const char *name, char tree[PATH_MAX])
{
    for (int i = 0; i < m->count; i++) {
        if (strcmp(m->type[i], "cgroup") != 0 || !has_option(m->options[i], controller))
            continue;
        char point[PATH_MAX];
        snprintf(point, sizeof point, "%s/%s", scratch, name);
        snprintf(tree, PATH_MAX, "%s/%s-tree", scratch, name);
        make_dir(point);
        make_dir(tree);
        bind(m->point[i], point);
        bind(tree, point);
        return true;
    }
    return false;
}

/* v1 only: the memory limit is the smallest over the ancestors (2^62 and
 * above is unlimited), cfs quota -1 is unlimited. */
static void check_v1_trees(const char *memory_tree, const char *cpu_tree, const char *cgroup_path)
{
    char memory_leaf[PATH_MAX], memory_parent[PATH_MAX], cpu_leaf[PATH_MAX], cpu_parent[PATH_MAX];
    cgroup_make_dirs(memory_tree, cgroup_path, memory_leaf);
    snprintf(memory_parent, sizeof memory_parent, "%s", memory_leaf);
    *strrchr(memory_parent, '/') = '\0';
    cgroup_write_file(memory_leaf, "memory.limit_in_bytes", "9223372036854771712\n");
    cgroup_write_file(memory_parent, "memory.limit_in_bytes", "67108864\n");
    unsigned quota = 0;
    if (cpu_tree) {
        cgroup_make_dirs(cpu_tree, cgroup_path, cpu_leaf);
        snprintf(cpu_parent, sizeof cpu_parent, "%s", cpu_leaf);
        *strrchr(cpu_parent, '/') = '\0';
        cgroup_write_file(cpu_leaf, "cpu.cfs_quota_us", "-1\n");
        cgroup_write_file(cpu_leaf, "cpu.cfs_period_us", "100000\n");
        cgroup_write_file(cpu_parent, "cpu.cfs_quota_us", "250000\n");
        cgroup_write_file(cpu_parent, "cpu.cfs_period_us", "100000\n");
        quota = 3;
    }
    check_limits(read_limits(NULL), 1, 64 * MiB, 0, quota, "v1 parent limit");
    cgroup_write_file(memory_leaf, "memory.limit_in_bytes", "1048576\n");
    check_limits(read_limits(NULL), 1, 1 * MiB, 0, quota, "v1 leaf limit");
    cgroup_write_file(memory_leaf, "memory.limit_in_bytes", "4611686018427387904\n");
    cgroup_write_file(memory_parent, "memory.limit_in_bytes", "9223372036854771712\n");
    check_limits(read_limits(NULL), 1, 0, 0, quota, "v1 unlimited");
    cgroup_remove_file(memory_leaf, "memory.limit_in_bytes");
    cgroup_remove_file(memory_parent, "memory.limit_in_bytes");
    if (cpu_tree) {
        cgroup_remove_file(cpu_leaf, "cpu.cfs_quota_us");
        cgroup_remove_file(cpu_leaf, "cpu.cfs_period_us");
        cgroup_remove_file(cpu_parent, "cpu.cfs_quota_us");
        cgroup_remove_file(cpu_parent, "cpu.cfs_period_us");
    }
}

/* A tmpfs whose mount point escapes to a mountinfo line over 4 KiB (each
 * space takes four characters), mounted before the cgroup2 line. */
static void mount_overlong_line(const char *scratch)
{
    char path[PATH_MAX];
    int len = snprintf(path, sizeof path, "%s/long", scratch);
    make_dir(path);
    for (int level = 0; level < 7; level++) {
        path[len++] = '/';
        path[len++] = 's';
        memset(path + len, ' ', 200);
        len += 200;
        path[len] = '\0';
        make_dir(path);
    }
    REQUIRE_MSG(mount("tmpfs", path, "tmpfs", 0, NULL) == 0, "mount tmpfs: %s", strerror(errno));
}

/* Runs in a child: the private mount namespace keeps every mount away from
 * the rest of the system and ends with the child. */
static int check_in_mount_namespace(const char *scratch)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return SKIPPED;

    /* "cpuset" and "name=memory_decoy" must not be taken for cpu and memory. */
    const char *cgroup_path = "/nested/leaf";
    char fake_cgroup[PATH_MAX], proc_cgroup[64];
    snprintf(fake_cgroup, sizeof fake_cgroup, "%s/cgroup", scratch);
    FILE *f = fopen(fake_cgroup, "w");
    REQUIRE_MSG(f, "create %s", fake_cgroup);
    fprintf(f, "12:name=memory_decoy:/decoy\n11:cpuset:/decoy\n10:cpuacct,cpu:%s\n"
               "9:blkio,memory:%s\n0::%s\n",
            cgroup_path, cgroup_path, cgroup_path);
    REQUIRE_MSG(fclose(f) == 0, "write %s", fake_cgroup);
    snprintf(proc_cgroup, sizeof proc_cgroup, "/proc/%d/cgroup", (int)getpid());
    if (mount(fake_cgroup, proc_cgroup, NULL, MS_BIND, NULL) != 0)
        return SKIPPED;
    char path[PATH_MAX];
    REQUIRE_MSG(cgroup_own_path(path, sizeof path) && strcmp(path, cgroup_path) == 0, "fake cgroup file");

    /* Bind the real v1 memory and cpu hierarchies elsewhere, then detach
     * every original cgroup mount so that ours are the only ones. */
    static struct cgroup_mounts original, now;
    list_cgroup_mounts(&original);
    char memory_tree[PATH_MAX], cpu_tree[PATH_MAX];
    bool v1_memory = fake_v1_hierarchy(&original, "memory", scratch, "v1 memory", memory_tree);
    bool v1_cpu = fake_v1_hierarchy(&original, "cpu", scratch, "v1 cpu", cpu_tree);
    for (int i = original.count - 1; i >= 0; i--)
        umount2(original.point[i], MNT_DETACH);
    list_cgroup_mounts(&now);
    REQUIRE_MSG(now.count == v1_memory + v1_cpu, "%d cgroup mounts left", now.count);

    if (v1_memory) {
        check_v1_trees(memory_tree, v1_cpu ? cpu_tree : NULL, cgroup_path);
        printf("  v1 fallback ok%s\n", v1_cpu ? " (memory and cpu)" : " (memory; no v1 cpu)");
    } else {
        printf("  no v1 memory hierarchy here: v1 fallback not checked\n");
    }

    mount_overlong_line(scratch);
    char v2_point[PATH_MAX], v2_tree[PATH_MAX];
    snprintf(v2_point, sizeof v2_point, "%s/v2 mount\tpoint\\", scratch);
    snprintf(v2_tree, sizeof v2_tree, "%s/v2-tree", scratch);
    make_dir(v2_point);
    make_dir(v2_tree);
    if (mount("cgroup2", v2_point, "cgroup2", 0, NULL) != 0) {
        printf("  cannot mount cgroup2 (%s): mountinfo path not checked\n", strerror(errno));
        return 0;
    }
    bind(v2_tree, v2_point);
    list_cgroup_mounts(&now);
    CHECK_MSG(now.escaped_cgroup2, "mountinfo does not show the escaped cgroup2 mount point");
    CHECK_MSG(now.longest_line > 4096, "longest mountinfo line %zu", now.longest_line);
    check_v2_tree(v2_tree, cgroup_path, NULL);
    printf("  mountinfo: escaped mount point found past a %zu-byte line\n", now.longest_line);
    return 0;
}

int main(void)
{
    struct container_limits real = read_limits(NULL);
    printf("this system: cgroup v%d, memory.max %zu, memory.high %zu, cpus %u, cpu quota %u\n",
           real.cgroup_version, real.memory_max, real.memory_high, real.cpus_allowed, real.cpu_quota);

    /* Nothing readable: no limits, and errno (set by the failed look-ups) restored. */
    check_limits(read_limits("/nonexistent/corealloc-cgroup"), 0, 0, 0, 0, "missing root");

    char cgroup_path[PATH_MAX];
    if (cgroup_own_path(cgroup_path, sizeof cgroup_path)) {
        char tree[] = "/tmp/ca cg.XXXXXX"; /* a space: the root is used as given */
        REQUIRE_MSG(mkdtemp(tree), "mkdtemp: %s", strerror(errno));
        check_v2_tree(tree, cgroup_path, tree);
        cgroup_remove_tree(tree);
        printf("fake v2 tree at the real cgroup path %s ok\n", cgroup_path);
    } else {
        printf("no 0:: line in /proc/self/cgroup: fake v2 tree not checked\n");
    }

    if (getenv("UNIT_UNDER_EMULATOR")) { /* qemu-user cannot fork into a namespace */
        puts("mount namespace checks skipped under an emulator");
        return check_status();
    }
    char scratch[] = "/tmp/ca ns.XXXXXX";
    REQUIRE_MSG(mkdtemp(scratch), "mkdtemp: %s", strerror(errno));
    fflush(stdout);
    pid_t child = fork();
    REQUIRE_MSG(child >= 0, "fork: %s", strerror(errno));
    if (child == 0) {
        int status = check_in_mount_namespace(scratch);
        fflush(stdout);
        _exit(status == SKIPPED ? status : check_status());
    }
    int status;
    REQUIRE_MSG(waitpid(child, &status, 0) == child, "waitpid: %s", strerror(errno));
    cgroup_remove_tree(scratch);
    CHECK_MSG(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == SKIPPED),
          "mount namespace checks failed (status %#x)", status);
    if (WEXITSTATUS(status) == SKIPPED)
        printf("mount namespace checks skipped (need CAP_SYS_ADMIN)\n");
    else
        printf("mount namespace checks ok\n");
    return check_status();
}
