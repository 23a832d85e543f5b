# 50 subprocess.Popen calls of a program that does not exist: each forks (or
# vforks) a child whose execve fails, as a test suite probing for tools does.
import subprocess

for i in range(50):
    try:
        subprocess.Popen(["/nonexistent-program"])
    except FileNotFoundError:
        pass
