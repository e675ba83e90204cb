/*
 * pause: the process that holds a pod's namespaces open, after Kubernetes'
 * build/pause/linux/pause.c. It sleeps forever, reaps orphaned children (it is PID 1
 * of the pod's PID namespace when the namespace is shared) and exits 0 on SIGINT or
 * SIGTERM. Built statically by hack/build-images.sh into agentplane.local/pause:1.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define VERSION "agentplane-pause-1"

static void sigdown(int signo) {
  psignal(signo, "Shutting down, got signal");
  exit(0);
}

static void sigreap(int signo) {
  (void)signo;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-v")) {
      printf("pause.c %s\n", VERSION);
      return 0;
    }
  }

  if (getpid() != 1) fprintf(stderr, "Warning: pause should be the first process\n");

  struct sigaction down = {.sa_handler = sigdown};
  struct sigaction reap = {.sa_handler = sigreap, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &down, NULL) < 0) return 1;
  if (sigaction(SIGTERM, &down, NULL) < 0) return 2;
  if (sigaction(SIGCHLD, &reap, NULL) < 0) return 3;

  for (;;) pause();
  fprintf(stderr, "Error: infinite loop terminated\n");
  return 42;
}
