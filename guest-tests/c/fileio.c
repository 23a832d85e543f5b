/* fileio: files without fork.
 *
 * mkstemp in the directory given as argv[1] (default: the working
 * directory, which the test harness makes fresh for every run), write,
 * lseek, pread/pwrite, fstat sizes, ftruncate, rename, readdir, unlink;
 * then stdio: fopen/fprintf/fgets/fscanf/fseek/ftell/fread/fwrite, and a
 * file larger than stdio's buffer read back in odd-sized chunks. No path,
 * inode or time is printed.
 *
 * "count" (argv[1]; the directory is then the working directory) is the
 * form tests/exact.rs single-steps: smaller files, and a fixed
 * name created with O_CREAT|O_EXCL instead of mkstemp, whose name
 * generation rejects an unlucky getrandom value and draws again (about 1
 * run in 20), so its instruction count is not the same on every run.
 */
#include "common.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int count = count_mode(argc, argv);
    const char *dir = argc > 1 && !count ? argv[1] : ".";
    char path[4096];
    int fd;
    if (count) {
        snprintf(path, sizeof path, "%s/guest-fileio-fixed", dir);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
        CHECK(fd >= 0);
        printf("open(O_CREAT|O_EXCL) ok\n");
    } else {
        snprintf(path, sizeof path, "%s/guest-fileio-XXXXXX", dir);
        fd = mkstemp(path);
        CHECK(fd >= 0);
        printf("mkstemp ok\n");
    }

    const char msg[] = "hello, file\n";
    CHECK(write(fd, msg, sizeof msg - 1) == (ssize_t)(sizeof msg - 1));
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    printf("size after write %lld, regular %d, mode %o\n", (long long)st.st_size, S_ISREG(st.st_mode),
           st.st_mode & 0777);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    printf("lseek cur %lld\n", (long long)pos);
    CHECK(lseek(fd, 100000, SEEK_SET) == 100000);
    CHECK(write(fd, "X", 1) == 1);
    CHECK(fstat(fd, &st) == 0);
    printf("size after sparse write %lld\n", (long long)st.st_size);
    char buf[64];
    CHECK(pread(fd, buf, 5, 7) == 5);
    buf[5] = 0;
    printf("pread(7, 5) = %s\n", buf);
    CHECK(pread(fd, buf, 4, 50000) == 4);
    printf("hole reads as zeros: %d %d %d %d\n", buf[0], buf[1], buf[2], buf[3]);
    CHECK(pwrite(fd, "HELLO", 5, 0) == 5);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    ssize_t n = read(fd, buf, 12);
    buf[n] = 0;
    printf("read back: %s", buf);
    CHECK(lseek(fd, -1, SEEK_END) == 100000);
    CHECK(ftruncate(fd, 6) == 0);
    CHECK(fstat(fd, &st) == 0);
    printf("size after ftruncate %lld\n", (long long)st.st_size);
    CHECK(read(fd, buf, 10) == 0);
    printf("read past end returns 0\n");
    CHECK(close(fd) == 0);
    CHECK(close(fd) == -1 && errno == EBADF);
    printf("second close fails with EBADF\n");

    char moved[4096];
    snprintf(moved, sizeof moved, "%s/guest-fileio-renamed", dir);
    CHECK(rename(path, moved) == 0);
    CHECK(open(path, O_RDONLY) == -1 && errno == ENOENT);
    printf("rename ok, old name gone (ENOENT)\n");
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        seen += strcmp(e->d_name, "guest-fileio-renamed") == 0;
    closedir(d);
    printf("readdir sees the renamed file: %d\n", seen);

    /* stdio */
    FILE *f = fopen(moved, "w+");
    CHECK(f != NULL);
    int nlines = count ? 20 : 1000;
    for (int i = 0; i < nlines; i++)
        fprintf(f, "line %d value %.3f %s\n", i, i / 7.0, i % 2 ? "odd" : "even");
    long end = ftell(f);
    printf("ftell after %d lines %ld\n", nlines, end);
    rewind(f);
    char line[128];
    int lines = 0;
    long total = 0;
    while (fgets(line, sizeof line, f)) {
        int k;
        double v;
        char w[8];
        CHECK(sscanf(line, "line %d value %lf %7s", &k, &v, w) == 3);
        CHECK(k == lines);
        total += k;
        lines++;
    }
    printf("fgets read %d lines, sum %ld, feof %d\n", lines, total, feof(f));
    CHECK(fseek(f, 10, SEEK_SET) == 0);
    int k2;
    CHECK(fscanf(f, "%*s %d", &k2) == 1);
    printf("fscanf after fseek(10): %d\n", k2);
    fclose(f);

    /* binary, larger than the stdio buffer, odd chunk sizes */
    f = fopen(moved, "wb");
    CHECK(f != NULL);
    uint32_t word, nwords = count ? 1100 : 100000;   /* 4,400 bytes: still over a stdio buffer */
    for (uint32_t i = 0; i < nwords; i++) {
        word = i * 2654435761u;
        CHECK(fwrite(&word, sizeof word, 1, f) == 1);
    }
    fclose(f);
    f = fopen(moved, "rb");
    CHECK(f != NULL);
    unsigned char chunk[997];
    size_t got, all = 0;
    uint64_t h = FNV_INIT;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        h = fnv1a(chunk, got, h);
        all += got;
    }
    fclose(f);
    printf("binary file: %zu bytes, digest %016llx\n", all, (unsigned long long)h);
    CHECK(all == 4 * (size_t)nwords);
    CHECK(unlink(moved) == 0);
    CHECK(access(moved, F_OK) == -1);
    printf("unlink ok\n");
    puts("ok");
    return 0;
}
