#!/usr/bin/env python3
"""A loopback OpenAI-compatible chat-completions endpoint that serves answers written
elsewhere, to measure ttap's LLM stage with a model that cannot be served here.

No model can run on this machine, so the LLM stage is measured in three steps
(scripts/llm/README.md):
  1. run `ttap eval ... --llm-url http://127.0.0.1:PORT/v1` against this server: every
     prompt it has no answer for is written to --pending (one JSON object per line: key,
     system, user) and answered with HTTP 422 (a client error, so ttap does not retry
     it), and ttap counts that window as failed;
  2. a strong model answers the pending prompts blind (no labels), one JSON answer per
     prompt, into --answers (key, content);
  3. run the same command again: known prompts get their answers, so ttap's widening
     rounds (a second request for an unsure answer) show up as new pending prompts; repeat
     until nothing is pending, then read ttap eval's LLM accuracy.

Prompts are keyed by the SHA-256 of the system and user messages, so an answer is served
only for the exact text it was written for. Standard library only.

  /usr/bin/python3 scripts/llm/replay_endpoint.py --port 18080 \
      --answers answers.jsonl --pending pending.jsonl
"""
import argparse
import hashlib
import http.server
import json
import sys
import threading


def prompt_key(system, user):
    return hashlib.sha256((system + "\0" + user).encode("utf-8")).hexdigest()[:24]


def load_answers(path):
    answers = {}
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                row = json.loads(line)
                content = row["content"]
                if not isinstance(content, str):
                    content = json.dumps(content)
                answers[row["key"]] = content
    except FileNotFoundError:
        pass
    return answers


# ttap's widening requests (src/llm/classifier.cpp, previous_round_note) carry this line.
WIDER_VIEW = "\nThis is a wider view (request "


class State:
    def __init__(self, answers_path, pending_path, first_round_only=False):
        self.first_round_only = first_round_only
        self.answers = load_answers(answers_path)
        self.pending_path = pending_path
        self.pending = set()
        self.lock = threading.Lock()
        self.served = self.missed = 0


def make_handler(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):  # quiet: one line per request is noise here
            pass

        def reply(self, code, body):
            data = json.dumps(body).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            if not self.path.endswith("/chat/completions"):
                return self.reply(404, {"error": {"message": "no such path: " + self.path}})
            try:
                length = int(self.headers.get("Content-Length", "0"))
                req = json.loads(self.rfile.read(length))
                msgs = {m["role"]: m["content"] for m in req["messages"]}
                system, user = msgs["system"], msgs["user"]
            except (ValueError, KeyError, TypeError) as e:
                return self.reply(400, {"error": {"message": "bad request: %s" % e}})
            key = prompt_key(system, user)
            if state.first_round_only and WIDER_VIEW in user:
                # Refused, not pending: each window keeps its first answer (the first-round figure).
                with state.lock:
                    state.missed += 1
                return self.reply(422, {"error": {"message": "widening requests are refused (--first-round-only)"}})
            with state.lock:
                content = state.answers.get(key)
                if content is None:
                    state.missed += 1
                    if key not in state.pending:
                        state.pending.add(key)
                        with open(state.pending_path, "a", encoding="utf-8") as f:
                            f.write(json.dumps({"key": key, "system": system, "user": user}) + "\n")
                else:
                    state.served += 1
            if content is None:
                return self.reply(422, {"error": {"message": "no recorded answer for prompt " + key}})
            self.reply(200, {
                "id": "replay-" + key, "object": "chat.completion", "model": req.get("model", ""),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
            })

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--answers", required=True, help="JSONL of {key, content}, read at start")
    ap.add_argument("--pending", required=True, help="JSONL the unanswered prompts are appended to")
    ap.add_argument("--first-round-only", action="store_true",
                    help="refuse ttap's widening requests, so each window keeps its first answer (the first-round figure)")
    args = ap.parse_args()
    state = State(args.answers, args.pending, args.first_round_only)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(state))
    print("replay endpoint on 127.0.0.1:%d with %d answers" % (args.port, len(state.answers)), file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        print("served %d, missed %d (%d distinct prompts pending)" % (state.served, state.missed, len(state.pending)),
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
