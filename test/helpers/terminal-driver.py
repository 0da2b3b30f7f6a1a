# Runs a command on a pseudo-terminal (python3's pty module: no native addon to build) and
# plays a script against it, as a person at a terminal would: wait for a text to be drawn,
# send a chunk of keys (an answer and its Enter in one write, as a paste or a slow link
# delivers them), or send the process a signal. Prints one JSON object: the exit code (or
# 128 + the signal), and everything the program drew.
#
#   python3 terminal-driver.py SCRIPT_JSON COMMAND ARG...
#   SCRIPT_JSON: [{"wait": "Question 1 of 5"}, {"send": "42\r"}, {"signal": "INT"}, {"close": true}]
import fcntl, json, os, pty, select, signal, struct, sys, termios, time

steps = json.loads(sys.argv[1])
argv = sys.argv[2:]
timeout = float(os.environ.get('PTY_STEP_TIMEOUT', '20'))

pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)

fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 120, 0, 0))
out = b''
seen = 0
status = None


def pump(wait):
    global out, status
    r, _, _ = select.select([fd], [], [], wait)
    if r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if data:
            out += data
            return True
    if status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
    return False


def fail(why):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    print(json.dumps({'error': why, 'output': out.decode('utf8', 'replace')}))
    sys.exit(0)


for step in steps:
    if 'wait' in step:
        text = step['wait'].encode('utf8')
        deadline = time.time() + timeout
        while out.find(text, seen) < 0:
            if time.time() > deadline:
                fail('never drew %r' % step['wait'])
            if not pump(0.05) and status is not None:
                # drain what is left before giving up
                while pump(0.05):
                    pass
                if out.find(text, seen) < 0:
                    fail('exited before drawing %r' % step['wait'])
        seen = out.find(text, seen) + len(text)
        time.sleep(0.1)  # let the view attach the field's key handler after the paint
    elif 'send' in step:
        os.write(fd, step['send'].encode('utf8'))
    elif 'signal' in step:
        os.kill(pid, getattr(signal, 'SIG' + step['signal']))
    elif 'sleep' in step:
        time.sleep(step['sleep'])

deadline = time.time() + timeout
while status is None:
    if time.time() > deadline:
        fail('did not exit')
    pump(0.05)
while pump(0.05):
    pass
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
print(json.dumps({'code': code, 'output': out.decode('utf8', 'replace')}))
