/* Container limits from the cgroup files (v2, or v1 as a fallback) and the
 * affinity mask.
 *
 * This runs inside the first malloc, so it never allocates: no stdio, no
 * opendir, only open/read/close into fixed stack buffers (about 10 KiB at the
 * deepest point: the large buffers sit in separate noinline functions, so
 * their frames never stack up). Anything unreadable means "no limit", never an error. */
#include "platform/container.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "platform/ascii.h"
#include "platform/os.h"

/* A mount point, a mount root or a cgroup path; longer ones are ignored. */
#define CGROUP_PATH_MAX 512
/* A mount point plus a cgroup path. */
#define CGROUP_DIR_MAX (2 * CGROUP_PATH_MAX)
/* Lines of /proc/self/mountinfo longer than this are skipped: cgroup mounts
 * have short lines, overlay mounts with many layers may not. */
#define MOUNTINFO_LINE_MAX 4096
/* /proc/self/cgroup: one line per v1 hierarchy plus the v2 line. */
#define PROC_CGROUP_MAX 4096
/* cgroup v1 reports "no limit" as a huge page-rounded number. */
#define V1_UNLIMITED ((uint64_t)1 << 62)

/* One cgroup hierarchy: where it is mounted and where this process sits in it. */
struct hierarchy {
    char mount_point[CGROUP_PATH_MAX];
    char mount_root[CGROUP_PATH_MAX];  /* the mount's root inside the hierarchy */
    char cgroup_path[CGROUP_PATH_MAX]; /* this process's cgroup, from /proc/self/cgroup */
    bool mounted, in_cgroup;
};

enum { UNIFIED, V1_MEMORY, V1_CPU, HIERARCHY_COUNT };

static bool copy_string(char *dst, size_t size, const char *src)
{
    size_t len = strlen(src);
    if (len >= size)
        return false;
    memcpy(dst, src, len + 1);
    return true;
}

static bool is_octal(char c)
{
    return c >= '0' && c <= '7';
}

/* Copies a mountinfo field, decoding the kernel's octal escapes ("\040" for a
 * space, "\134" for a backslash); false when it does not fit. */
static bool copy_unescaped(char *dst, size_t size, const char *src)
{
    size_t len = 0;
    while (*src) {
        char c = *src++;
        if (c == '\\' && is_octal(src[0]) && is_octal(src[1]) && is_octal(src[2])) {
            c = (char)((src[0] - '0') << 6 | (src[1] - '0') << 3 | (src[2] - '0'));
            src += 3;
        }
        if (len + 1 >= size)
            return false;
        dst[len++] = c;
    }
    dst[len] = '\0';
    return true;
}

/* Whether a comma-separated list ("rw,cpu,cpuacct") holds word as a whole item. */
static bool list_has(const char *list, const char *word)
{
    size_t word_len = strlen(word);
    for (const char *item = list;;) {
        const char *end = strchrnul(item, ',');
        if ((size_t)(end - item) == word_len && memcmp(item, word, word_len) == 0)
            return true;
        if (!*end)
            return false;
        item = end + 1;
    }
}

/* The next space-separated field of a line, terminated in place; NULL at the end. */
static char *next_field(char **cursor)
{
    char *p = *cursor;
    while (*p == ' ')
        p++;
    if (!*p)
        return NULL;
    char *field = p;
    while (*p && *p != ' ')
        p++;
    if (*p)
        *p++ = '\0';
    *cursor = p;
    return field;
}

/* Keeps the first usable mount of each hierarchy. */
static void note_mount(struct hierarchy *h, const char *root, const char *mount_point)
{
    if (!h->mounted)
        h->mounted = copy_unescaped(h->mount_root, sizeof h->mount_root, root) &&
                     copy_unescaped(h->mount_point, sizeof h->mount_point, mount_point);
}

/* "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory":
 * the root and the mount point are fields 4 and 5; after the optional fields
 * and a lone "-" come the filesystem type, the source and the super options. */
static void parse_mountinfo_line(char *line, struct hierarchy h[HIERARCHY_COUNT])
{
    char *cursor = line, *field[5];
    for (int i = 0; i < 5; i++)
        if (!(field[i] = next_field(&cursor)))
            return;
    char *separator;
    while ((separator = next_field(&cursor)) && strcmp(separator, "-") != 0) {
    }
    char *fs_type = next_field(&cursor);
    char *source = next_field(&cursor);
    char *super_options = next_field(&cursor);
    if (!separator || !fs_type || !source || !super_options)
        return;
    if (strcmp(fs_type, "cgroup2") == 0) {
        note_mount(&h[UNIFIED], field[3], field[4]);
    } else if (strcmp(fs_type, "cgroup") == 0) {
        if (list_has(super_options, "memory"))
            note_mount(&h[V1_MEMORY], field[3], field[4]);
        if (list_has(super_options, "cpu"))
            note_mount(&h[V1_CPU], field[3], field[4]);
    }
}

/* /proc/self/mountinfo can be long, so it is read in chunks and parsed line by
 * line; a line that does not fit in the buffer is skipped whole. */
__attribute__((noinline)) static void scan_mountinfo(struct hierarchy h[HIERARCHY_COUNT])
{
    int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[MOUNTINFO_LINE_MAX];
    size_t filled = 0;
    bool skipping = false; /* inside a line too long for buf */
    for (;;) {
        ssize_t got = read(fd, buf + filled, sizeof buf - 1 - filled);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        filled += (size_t)got;
        size_t start = 0;
        char *newline;
        while ((newline = memchr(buf + start, '\n', filled - start))) {
            *newline = '\0';
            if (!skipping)
                parse_mountinfo_line(buf + start, h);
            skipping = false;
            start = (size_t)(newline - buf) + 1;
        }
        if (start == 0 && filled == sizeof buf - 1) { /* no end of line in a full buffer */
            skipping = true;
            filled = 0;
            continue;
        }
        memmove(buf, buf + start, filled - start);
        filled -= start;
    }
    if (filled && !skipping) { /* a last line without its newline */
        buf[filled] = '\0';
        parse_mountinfo_line(buf, h);
    }
    close(fd);
}

static void note_cgroup(struct hierarchy *h, const char *path)
{
    if (!h->in_cgroup)
        h->in_cgroup = copy_string(h->cgroup_path, sizeof h->cgroup_path, path);
}

/* "0::/user.slice/..." is the v2 cgroup; "4:memory:/docker/..." and
 * "3:cpu,cpuacct:/docker/..." are v1 ones. */
__attribute__((noinline)) static void read_proc_cgroup(struct hierarchy h[HIERARCHY_COUNT])
{
    char buf[PROC_CGROUP_MAX];
    size_t len = os_read_small_file("/proc/self/cgroup", buf, sizeof buf);
    char *line = buf, *newline;
    /* Only whole lines: a last line cut off by a full buffer is ignored. */
    while ((newline = memchr(line, '\n', len - (size_t)(line - buf)))) {
        *newline = '\0';
        char *controllers = strchr(line, ':');
        char *path = controllers ? strchr(controllers + 1, ':') : NULL;
        if (path) {
            *controllers++ = '\0';
            *path++ = '\0';
            if (strcmp(line, "0") == 0 && !*controllers) {
                note_cgroup(&h[UNIFIED], path);
            } else {
                if (list_has(controllers, "memory"))
                    note_cgroup(&h[V1_MEMORY], path);
                if (list_has(controllers, "cpu"))
                    note_cgroup(&h[V1_CPU], path);
            }
        }
        line = newline + 1;
    }
}

/* Whether a path has a ".." component. */
static bool climbs_up(const char *path)
{
    for (const char *p = path; (p = strstr(p, "..")); p += 2)
        if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
            return true;
    return false;
}

static size_t length_without_trailing_slashes(const char *s)
{
    size_t len = strlen(s);
    while (len && s[len - 1] == '/')
        len--;
    return len;
}

/* The directory of this process's cgroup: the mount point plus the cgroup
 * path below the mount's root, without a trailing slash (so "" is "/").
 * *mount_len is the length of the mount-point part, where walking up the
 * ancestors stops. */
static bool cgroup_directory(const struct hierarchy *h, char dir[CGROUP_DIR_MAX], size_t *mount_len)
{
    if (!h->mounted || !h->in_cgroup)
        return false;
    const char *path = h->cgroup_path;
    size_t root_len = length_without_trailing_slashes(h->mount_root); /* "/" matches all */
    if (strncmp(path, h->mount_root, root_len) == 0 && (path[root_len] == '/' || !path[root_len]))
        path += root_len;
    /* A cgroup outside the mount's view ("/../other", seen across cgroup
     * namespaces) has no directory we could read. */
    if ((*path && *path != '/') || climbs_up(path))
        return false;
    size_t point_len = length_without_trailing_slashes(h->mount_point);
    size_t path_len = length_without_trailing_slashes(path);
    if (point_len + path_len >= CGROUP_DIR_MAX)
        return false;
    memcpy(dir, h->mount_point, point_len);
    memcpy(dir + point_len, path, path_len);
    dir[point_len + path_len] = '\0';
    *mount_len = point_len;
    return true;
}

/* Reads dir/name into buf; false when it is missing or empty. */
static bool read_cgroup_file(const char *dir, const char *name, char *buf, size_t size)
{
    char path[CGROUP_DIR_MAX + 32];
    size_t dir_len = strlen(dir), name_len = strlen(name);
    if (dir_len + 1 + name_len >= sizeof path)
        return false;
    memcpy(path, dir, dir_len);
    path[dir_len] = '/';
    memcpy(path + dir_len + 1, name, name_len + 1);
    return os_read_small_file(path, buf, size) > 0;
}

/* CPUs' worth of a bandwidth quota, rounded up; 0 for none. */
static uint64_t cpus_of_bandwidth(uint64_t quota, uint64_t period)
{
    return period ? quota / period + (quota % period != 0) : 0;
}

/* A reader of one level of the hierarchy: its limit (0 for none), setting
 * *found when the limit file exists. */
typedef uint64_t (*level_reader)(const char *dir, bool *found);

/* A number of bytes or "max". */
static uint64_t read_v2_memory_file(const char *dir, const char *name, bool *found)
{
    char text[32];
    if (!read_cgroup_file(dir, name, text, sizeof text))
        return 0;
    *found = true;
    const char *p = text;
    uint64_t bytes;
    return ascii_decimal(&p, &bytes) ? bytes : 0;
}

static uint64_t read_memory_max(const char *dir, bool *found)
{
    return read_v2_memory_file(dir, "memory.max", found);
}

static uint64_t read_memory_high(const char *dir, bool *found)
{
    return read_v2_memory_file(dir, "memory.high", found);
}

/* "<quota|max> <period>", both in microseconds. */
static uint64_t read_cpu_max(const char *dir, bool *found)
{
    char text[64];
    if (!read_cgroup_file(dir, "cpu.max", text, sizeof text))
        return 0;
    *found = true;
    const char *p = text;
    uint64_t quota, period;
    if (!ascii_decimal(&p, &quota) || *p++ != ' ' || !ascii_decimal(&p, &period))
        return 0;
    return cpus_of_bandwidth(quota, period);
}

static uint64_t read_v1_memory_limit(const char *dir, bool *found)
{
    char text[32];
    if (!read_cgroup_file(dir, "memory.limit_in_bytes", text, sizeof text))
        return 0;
    *found = true;
    const char *p = text;
    uint64_t bytes;
    return ascii_decimal(&p, &bytes) && bytes < V1_UNLIMITED ? bytes : 0;
}

/* cpu.cfs_quota_us is -1 when unlimited. */
static uint64_t read_v1_cpu_quota(const char *dir, bool *found)
{
    char quota_text[32], period_text[32];
    if (!read_cgroup_file(dir, "cpu.cfs_quota_us", quota_text, sizeof quota_text) ||
        !read_cgroup_file(dir, "cpu.cfs_period_us", period_text, sizeof period_text))
        return 0;
    *found = true;
    const char *quota_p = quota_text, *period_p = period_text;
    uint64_t quota, period;
    if (!ascii_decimal(&quota_p, &quota) || !ascii_decimal(&period_p, &period))
        return 0;
    return cpus_of_bandwidth(quota, period);
}

/* The smallest limit of the cgroup at cgroup_dir and of its ancestors up to
 * and including the mount point (a cgroup gets no more than any ancestor
 * allows); 0 when there is none. */
__attribute__((noinline)) static uint64_t smallest_limit(const char *cgroup_dir, size_t mount_len, level_reader read_level,
                               bool *found)
{
    char dir[CGROUP_DIR_MAX];
    size_t len = strlen(cgroup_dir);
    memcpy(dir, cgroup_dir, len + 1);
    uint64_t smallest = 0;
    for (;;) {
        uint64_t limit = read_level(dir, found);
        if (limit && (!smallest || limit < smallest))
            smallest = limit;
        if (len <= mount_len)
            return smallest;
        while (len > mount_len && dir[len - 1] != '/') /* drop the last component */
            len--;
        if (len > mount_len) /* and its slash */
            len--;
        dir[len] = '\0';
    }
}

static bool directory_exists(const char *dir)
{
    return access(*dir ? dir : "/", F_OK) == 0;
}

static size_t clamp_to_size(uint64_t bytes)
{
#if SIZE_MAX < UINT64_MAX
    if (bytes > SIZE_MAX)
        return SIZE_MAX;
#endif
    return (size_t)bytes;
}

static unsigned clamp_to_unsigned(uint64_t n)
{
    return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* CPUs in the affinity mask. cpu_set_t holds CPU_SETSIZE (1024) CPUs; the
 * kernel refuses a mask smaller than its own with EINVAL, so bigger machines
 * get a second try with a wider mask. */
__attribute__((noinline)) static unsigned count_allowed_cpus(void)
{
    cpu_set_t set;
    int count = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        count = CPU_COUNT(&set);
    } else if (errno == EINVAL) {
        cpu_set_t wide[8192 / CPU_SETSIZE];
        if (sched_getaffinity(0, sizeof wide, wide) == 0)
            count = CPU_COUNT_S(sizeof wide, wide);
    }
    return count > 0 ? (unsigned)count : 1;
}

void container_read(const char *cgroup_root, struct container_limits *out)
{
    int saved_errno = errno;
    struct hierarchy h[HIERARCHY_COUNT];
    memset(h, 0, sizeof h);
    if (cgroup_root) {
        /* The caller names the v2 hierarchy: mountinfo is not consulted, so
         * there is no v1 fallback either. */
        h[UNIFIED].mounted = copy_string(h[UNIFIED].mount_point, sizeof h[UNIFIED].mount_point,
                                         cgroup_root);
        strcpy(h[UNIFIED].mount_root, "/");
    } else {
        scan_mountinfo(h);
    }
    read_proc_cgroup(h);

    *out = (struct container_limits){.cpus_allowed = count_allowed_cpus()};
    char dir[CGROUP_DIR_MAX];
    size_t mount_len;
    bool memory_found = false, cpu_found = false;
    if (cgroup_directory(&h[UNIFIED], dir, &mount_len) && directory_exists(dir)) {
        out->cgroup_version = 2;
        out->memory_max = clamp_to_size(smallest_limit(dir, mount_len, read_memory_max, &memory_found));
        out->memory_high = clamp_to_size(smallest_limit(dir, mount_len, read_memory_high, &memory_found));
        out->cpu_quota = clamp_to_unsigned(smallest_limit(dir, mount_len, read_cpu_max, &cpu_found));
    }
    /* v1 only where v2 has no say: on hybrid systems the v2 hierarchy exists
     * but the memory controller sits in a v1 one. */
    if (!memory_found && cgroup_directory(&h[V1_MEMORY], dir, &mount_len)) {
        bool found = false;
        uint64_t limit = smallest_limit(dir, mount_len, read_v1_memory_limit, &found);
        if (found) {
            out->cgroup_version = 1;
            out->memory_max = clamp_to_size(limit);
        }
    }
    if (!cpu_found && cgroup_directory(&h[V1_CPU], dir, &mount_len)) {
        bool found = false;
        out->cpu_quota = clamp_to_unsigned(smallest_limit(dir, mount_len, read_v1_cpu_quota, &found));
    }
    errno = saved_errno;
}
