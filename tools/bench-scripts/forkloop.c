/* Forks N children (argv[1], 200 by default) one after another, each
 * _exit(0)ing at once while the parent waits for it, and prints the time
 * a fork took on stderr: what a fork costs (issue 18; docs/PERFORMANCE.md,
 * thirtieth session). Built `gcc -O1 -static`. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc,char**argv){int n=argc>1?atoi(argv[1]):200;struct timespec a,b;clock_gettime(CLOCK_MONOTONIC,&a);
for(int i=0;i<n;i++){pid_t p=fork();if(p==0)_exit(0);int st;waitpid(p,&st,0);}
clock_gettime(CLOCK_MONOTONIC,&b);fprintf(stderr,"%.1f us/fork\n",((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/n/1000);}
