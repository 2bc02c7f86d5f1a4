/* The floor for dockd's API (issue 14): a Unix-socket server that answers every NDJSON line with a
 * fixed reply, one epoll thread, no parsing. What any server of this kind costs on this machine.
 * Usage: floor_server SOCKET_PATH   (runs until killed) */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char reply[] = "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"api\":{\"major\":1,\"minor\":1},"
                            "\"daemon\":\"dockd\",\"protocol\":\"1.0\",\"version\":\"0.1.0\"}}\n";

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: floor_server SOCKET_PATH\n"); return 64; }
    signal(SIGPIPE, SIG_IGN);  /* a client that left is closed, not fatal */
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    unlink(argv[1]);
    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 256)) { perror("floor_server"); return 1; }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls}, evs[64];
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    static char in[65536], out[sizeof in / 2 * sizeof reply];
    for (;;) {
        int n = epoll_wait(ep, evs, 64, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd, c;
            if (fd == ls) {  /* clients block on write: the load generator always reads */
                while ((c = accept(ls, NULL, NULL)) >= 0) { ev.data.fd = c; epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev); }
                continue;
            }
            ssize_t r = read(fd, in, sizeof in), len = 0;
            if (r <= 0) { close(fd); continue; }
            for (ssize_t k = 0; k < r; k++)
                if (in[k] == '\n') { memcpy(out + len, reply, sizeof reply - 1); len += sizeof reply - 1; }
            for (ssize_t done = 0, w; done < len; done += w)
                if ((w = write(fd, out + done, len - done)) < 0) break;
        }
    }
}
