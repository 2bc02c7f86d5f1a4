/* A load generator for NDJSON-over-Unix-socket servers (dockd's API and the floor server), in C so
 * that the harness is not what limits the figures (issue 14).
 *
 *   loadgen SOCKET rt    CLIENTS 0     SECONDS [PID] [REQUEST]   one request at a time per client
 *   loadgen SOCKET pipe  CLIENTS DEPTH SECONDS [PID] [REQUEST]   DEPTH requests in flight per client
 *   loadgen SOCKET burst 1     COUNT SECONDS [PID] [REQUEST]   COUNT requests written at once, all
 *                                                               replies read, again, for SECONDS
 *   loadgen SOCKET subs  CLIENTS 0     SECONDS [PID] [REQUEST]   send REQUEST (a subscribe) once per
 *                                                               client, then count the lines that come
 *
 * Each client is a thread with its own connection (subs: one epoll thread for all). After a 0.5 s
 * warm-up, the window of SECONDS is measured; with PID, that process's CPU time over the same window
 * (from /proc/PID/stat) is reported too. Prints one JSON object. Every line received counts as a
 * reply (rt, pipe, burst) or a notification (subs): requests must be ones the server answers. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *path, *mode, *request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"dockd.version\"}\n";
static int clients, depth, pid;
static double seconds;
static atomic_int measuring, stopping, failures;
static size_t request_len;

typedef struct { long replies; long *latency_ns; long samples, capacity; } client_t;

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static long cpu_ticks(int p) {
    char name[64], text[4096];
    snprintf(name, sizeof name, "/proc/%d/stat", p);
    FILE *f = fopen(name, "r");
    if (!f) return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *s = strrchr(text, ')');
    long utime = 0, stime = 0;
    if (s) sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime);
    return utime + stime;
}

static int connect_to(void) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("loadgen: connect"); exit(1); }
    return fd;
}

static void send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) { if (errno == EINTR) continue; atomic_fetch_add(&failures, 1); atomic_store(&stopping, 1); return; }
        data += w;
        len -= (size_t)w;
    }
}

/* Reads once; returns the number of complete lines received, or -1 at EOF/error. */
static long read_lines(int fd, char *buf, size_t size) {
    ssize_t r = read(fd, buf, size);
    if (r <= 0) { if (r < 0 && errno == EINTR) return 0; return -1; }
    long lines = 0;
    for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + r - p))) != NULL; p++) lines++;
    return lines;
}

static void *run_client(void *arg) {
    client_t *c = arg;
    int fd = connect_to();
    static _Thread_local char buf[1 << 20];
    char *many = NULL;
    long batch = strcmp(mode, "rt") == 0 ? 1 : depth;
    many = malloc(request_len * (size_t)batch);
    for (long i = 0; i < batch; i++) memcpy(many + i * request_len, request, request_len);
    if (strcmp(mode, "pipe") == 0) {
        send_all(fd, many, request_len * (size_t)depth);
        while (!atomic_load(&stopping)) {
            long k = read_lines(fd, buf, sizeof buf);
            if (k < 0) { atomic_fetch_add(&failures, 1); break; }
            if (atomic_load(&measuring)) c->replies += k;
            for (long sent = 0; sent < k; sent += depth)
                send_all(fd, many, request_len * (size_t)(k - sent < depth ? k - sent : depth));
        }
    } else {  /* rt and burst: write a batch, read until every reply came (while still writing:
               * a burst larger than the socket buffers must not deadlock against the server) */
        while (!atomic_load(&stopping)) {
            long t0 = now_ns(), got = 0;
            size_t off = 0, len = request_len * (size_t)batch;
            if (batch == 1) {  /* rt: the plain write and blocking reads, as any client does */
                send_all(fd, many, len);
                off = len;
                while (got < 1) {
                    long k = read_lines(fd, buf, sizeof buf);
                    if (k < 0) { atomic_fetch_add(&failures, 1); atomic_store(&stopping, 1); break; }
                    got += k;
                }
            }
            while (got < batch && !atomic_load(&stopping)) {
                struct pollfd p = {.fd = fd, .events = (short)(POLLIN | (off < len ? POLLOUT : 0))};
                if (poll(&p, 1, 100) <= 0) continue;
                if ((p.revents & POLLOUT) && off < len) {
                    ssize_t w = send(fd, many + off, len - off, MSG_DONTWAIT);
                    if (w > 0) off += (size_t)w;
                }
                if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
                    long k = read_lines(fd, buf, sizeof buf);
                    if (k < 0) { atomic_fetch_add(&failures, 1); atomic_store(&stopping, 1); break; }
                    got += k;
                }
            }
            if (atomic_load(&measuring)) {
                c->replies += got;
                if (c->samples == c->capacity) {
                    c->capacity = c->capacity ? c->capacity * 2 : 65536;
                    c->latency_ns = realloc(c->latency_ns, sizeof(long) * (size_t)c->capacity);
                }
                c->latency_ns[c->samples++] = now_ns() - t0;
            }
        }
    }
    free(many);
    close(fd);
    return NULL;
}

/* subs: every connection subscribes once, then one epoll thread counts the lines each receives. */
static void *run_subscribers(void *arg) {
    client_t *c = arg;
    int ep = epoll_create1(0);
    int *fds = calloc((size_t)clients, sizeof *fds);
    static char buf[1 << 20];
    for (int i = 0; i < clients; i++) {
        fds[i] = connect_to();
        send_all(fds[i], request, request_len);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
    }
    struct epoll_event evs[256];
    while (!atomic_load(&stopping)) {
        int n = epoll_wait(ep, evs, 256, 100);
        for (int i = 0; i < n; i++) {
            int k = (int)evs[i].data.u32;
            long lines = read_lines(fds[k], buf, sizeof buf);
            if (lines < 0) { atomic_fetch_add(&failures, 1); epoll_ctl(ep, EPOLL_CTL_DEL, fds[k], NULL); continue; }
            if (atomic_load(&measuring)) c[k].replies += lines;
        }
    }
    return NULL;
}

static int cmp_long(const void *a, const void *b) { long x = *(const long *)a, y = *(const long *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: loadgen SOCKET rt|pipe|burst|subs CLIENTS DEPTH SECONDS [PID] [REQUEST]\n");
        return 64;
    }
    signal(SIGPIPE, SIG_IGN);  /* a server that closes is a failure counted, not a silent death */
    path = argv[1]; mode = argv[2]; clients = atoi(argv[3]); depth = atoi(argv[4]); seconds = atof(argv[5]);
    pid = argc > 6 ? atoi(argv[6]) : 0;
    if (argc > 7) {
        size_t n = strlen(argv[7]);
        char *r = malloc(n + 2);
        memcpy(r, argv[7], n);
        if (n == 0 || r[n - 1] != '\n') r[n++] = '\n';
        r[n] = 0;
        request = r;
    }
    request_len = strlen(request);
    client_t *c = calloc((size_t)clients, sizeof *c);
    pthread_t *threads = calloc((size_t)clients, sizeof *threads);
    int subs = strcmp(mode, "subs") == 0;
    if (subs) {
        pthread_create(&threads[0], NULL, run_subscribers, c);
    } else {
        for (int i = 0; i < clients; i++) pthread_create(&threads[i], NULL, run_client, &c[i]);
    }
    usleep(500000);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    long ticks0 = pid ? cpu_ticks(pid) : 0, t0 = now_ns();
    atomic_store(&measuring, 1);
    usleep((useconds_t)(seconds * 1e6));
    atomic_store(&measuring, 0);
    long t1 = now_ns(), ticks1 = pid ? cpu_ticks(pid) : 0;
    getrusage(RUSAGE_SELF, &r1);
    atomic_store(&stopping, 1);
    double window = (t1 - t0) / 1e9;
    long replies = 0, samples = 0;
    for (int i = 0; i < clients; i++) { replies += c[i].replies; samples += c[i].samples; }
    long *all = malloc(sizeof(long) * (size_t)(samples ? samples : 1)), at = 0;
    for (int i = 0; i < clients; i++) { memcpy(all + at, c[i].latency_ns, sizeof(long) * (size_t)c[i].samples); at += c[i].samples; }
    qsort(all, (size_t)samples, sizeof(long), cmp_long);
    double own = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec)
               + ((r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec)) / 1e6;
    long min_replies = -1, max_replies = 0;
    for (int i = 0; i < clients; i++) {
        if (min_replies < 0 || c[i].replies < min_replies) min_replies = c[i].replies;
        if (c[i].replies > max_replies) max_replies = c[i].replies;
    }
    printf("{\"mode\":\"%s\",\"clients\":%d,\"depth\":%d,\"seconds\":%.3f,\"lines\":%ld,\"per_second\":%.1f,"
           "\"per_client_min\":%.1f,\"per_client_max\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"failures\":%d,"
           "\"loadgen_cpu\":%.1f,\"target_cpu\":%.1f}\n",
           mode, clients, depth, window, replies, replies / window, min_replies / window, max_replies / window,
           samples ? all[samples / 2] / 1e3 : 0.0, samples ? all[(long)(samples * 0.99)] / 1e3 : 0.0,
           atomic_load(&failures), 100 * own / window,
           pid ? 100.0 * (double)(ticks1 - ticks0) / (double)sysconf(_SC_CLK_TCK) / window : 0.0);
    fflush(stdout);
    _exit(0);  /* threads may be blocked in read(): the process ends them */
}
