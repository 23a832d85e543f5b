# 50 forks of a child that exits at once, each waited for (issue 18).
import os
for i in range(50):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
