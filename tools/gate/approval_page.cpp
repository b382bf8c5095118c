#include "tools/gate/approval_page.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "tools/common/html_escape.h"

namespace mt::tools {
namespace approval = launch::approval;

namespace {

constexpr const char* kCookie = "mt_approvals";
constexpr int64_t kSessionSeconds = 30 * 60;

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), int(bytes)) != 1) return "";
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (unsigned char c : raw) s += {kHex[c >> 4], kHex[c & 15]};
  return s;
}

bool SameSecret(const std::string& a, const std::string& b) {
  return !a.empty() && a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string CookieValue(const httplib::Request& req, const std::string& name) {
  const std::string header = req.get_header_value("Cookie");
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string item = header.substr(pos, end - pos);
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    if (item.size() > name.size() && item.compare(0, name.size(), name) == 0 && item[name.size()] == '=')
      return item.substr(name.size() + 1);
    pos = end + 1;
  }
  return "";
}

struct Session {
  mcp::Principal who;
  std::string csrf;
  int64_t expires = 0;
  std::string flash;
};

struct PageState {
  ApprovalEnv env;
  TokenCheck check;
  std::mutex mu;
  std::map<std::string, Session> sessions;   // session id → session

  // The live session of this request (refreshed), or nullopt.
  std::optional<Session> Find(const httplib::Request& req, std::string* sid) {
    *sid = CookieValue(req, kCookie);
    std::lock_guard lock(mu);
    const int64_t now = approval::UnixNow();
    for (auto it = sessions.begin(); it != sessions.end();) it = it->second.expires < now ? sessions.erase(it) : ++it;
    auto it = sessions.find(*sid);
    if (sid->empty() || it == sessions.end()) return std::nullopt;
    it->second.expires = now + kSessionSeconds;
    return it->second;
  }
  void Flash(const std::string& sid, const std::string& msg) {
    std::lock_guard lock(mu);
    if (auto it = sessions.find(sid); it != sessions.end()) it->second.flash = msg;
  }
  std::string TakeFlash(const std::string& sid) {
    std::lock_guard lock(mu);
    auto it = sessions.find(sid);
    if (it == sessions.end()) return "";
    std::string f = std::move(it->second.flash);
    it->second.flash.clear();
    return f;
  }
  // Who a bearer token (if any) names, for the audit line of a refused request.
  Actor Claimed(const httplib::Request& req) {
    const std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0 && check)
      if (auto p = check(auth.substr(7))) return Actor{p->name, p->role};
    return Actor{"anonymous (" + req.remote_addr + ")", "none"};
  }
};

void Send(httplib::Response& res, int status, const std::string& title, const std::string& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  res.set_content("<!doctype html><html><head><meta charset=utf-8><title>" + HtmlEscape(title) +
                      "</title><style>body{font-family:sans-serif;margin:2em;max-width:70em}pre{background:#f4f4f4;"
                      "padding:.8em;overflow-x:auto}section{border:1px solid #ccc;padding:1em;margin:1em 0}"
                      "td,th{padding:.2em .6em;text-align:left}.flash{background:#ffd;padding:.6em}</style></head><body>"
                      "<h1>" + HtmlEscape(title) + "</h1>" + body + "</body></html>",
                  "text/html; charset=utf-8");
}

std::string LoginForm(const std::string& note) {
  return (note.empty() ? "" : "<p class=flash id=flash>" + HtmlEscape(note) + "</p>") +
         "<form method=post action=/approvals/login><label>Approver token <input type=password name=token id=token "
         "autocomplete=off></label> <button type=submit id=login>Log in</button></form>";
}

std::string ListPage(const ApprovalEnv& env, const Session& s, const std::string& flash) {
  std::string body = "<p>Logged in as <b id=who>" + HtmlEscape(s.who.name) +
                     "</b>. <form method=post action=/approvals/logout style=display:inline><input type=hidden name=csrf value=\"" +
                     HtmlEscape(s.csrf) + "\"><button type=submit id=logout>Log out</button></form></p>";
  if (!flash.empty()) body += "<p class=flash id=flash>" + HtmlEscape(flash) + "</p>";
  std::string pending, done;
  int shown_done = 0;
  for (const auto& r : env.Store().List(approval::UnixNow())) {
    if (r.state == "pending") {
      pending += "<section class=plan id=\"plan-" + r.id + "\"><h2>" + HtmlEscape(r.kind) + " plan <code>" + r.id +
                 "</code></h2><p>Requested by <b>" + HtmlEscape(r.requester) + "</b> (" + HtmlEscape(r.requester_role) + ") at " +
                 approval::IsoUtc(r.created) + "; expires " + approval::IsoUtc(r.expires) + ". Hash <code>" + HtmlEscape(r.hash) +
                 "</code></p><pre>" + HtmlEscape(r.summary) + "</pre><details><summary>Full plan (JSON)</summary><pre>" +
                 HtmlEscape(r.plan.dump(2)) +
                 "</pre></details><form method=post action=/approvals/decide><input type=hidden name=csrf value=\"" +
                 HtmlEscape(s.csrf) + "\"><input type=hidden name=id value=\"" + r.id + "\"><input type=hidden name=hash value=\"" +
                 HtmlEscape(r.hash) + "\"><button type=submit name=decision value=approve id=\"approve-" + r.id +
                 "\">Approve and run</button> <button type=submit name=decision value=deny id=\"deny-" + r.id +
                 "\">Deny</button></form></section>";
    } else if (shown_done++ < 50) {
      done += "<tr id=\"done-" + r.id + "\"><td><code>" + r.id + "</code></td><td>" + HtmlEscape(r.kind) + "</td><td class=state>" +
              HtmlEscape(r.state) + "</td><td class=job>" + HtmlEscape(r.job_id) + "</td><td>" + HtmlEscape(r.approver) + "</td><td>" +
              HtmlEscape(r.via) + "</td><td>" + HtmlEscape(r.error.empty() ? r.result : r.error) + "</td></tr>";
    }
  }
  body += "<h2>Pending</h2>" + (pending.empty() ? "<p id=none>No plans wait for approval.</p>" : pending);
  body += "<h2>Recent</h2><table><tr><th>plan</th><th>kind</th><th>state</th><th>job</th><th>approver</th><th>via</th>"
          "<th>result</th></tr>" + done + "</table>";
  return body;
}

}  // namespace

std::vector<mcp::PageRoute> ApprovalPages(const ApprovalEnv& env, TokenCheck check_token) {
  auto st = std::make_shared<PageState>();
  st->env = env;
  st->check = std::move(check_token);
  std::vector<mcp::PageRoute> routes;

  routes.push_back({"GET", "/approvals", [st](const httplib::Request& req, httplib::Response& res) {
                      std::string sid;
                      auto s = st->Find(req, &sid);
                      if (!s) {
                        Send(res, 200, "mt approvals: log in",
                             LoginForm(st->check ? "" : "No tokens are configured (configs/mt.yaml tokens:); nobody can log in."));
                        return;
                      }
                      Send(res, 200, "mt approvals", ListPage(st->env, *s, st->TakeFlash(sid)));
                    }});

  routes.push_back({"POST", "/approvals/login", [st](const httplib::Request& req, httplib::Response& res) {
                      const std::string token = req.get_param_value("token");
                      std::optional<mcp::Principal> who;
                      if (st->check && !token.empty()) who = st->check(token);
                      if (!who || who->role != "approver") {
                        const Actor a = who ? Actor{who->name, who->role} : Actor{"unknown token (" + req.remote_addr + ")", "none"};
                        Refuse(st->env, "web-login", "", a, who ? "role " + who->role + " may not approve" : "invalid token");
                        Send(res, 403, "mt approvals: refused",
                             LoginForm(who ? "This token's role (" + who->role + ") may not approve plans." : "Invalid token."));
                        return;
                      }
                      const std::string sid = RandomHex(32), csrf = RandomHex(32);
                      if (sid.empty() || csrf.empty()) {
                        Send(res, 500, "mt approvals", "<p>no randomness for a session</p>");
                        return;
                      }
                      {
                        std::lock_guard lock(st->mu);
                        st->sessions[sid] = Session{*who, csrf, approval::UnixNow() + kSessionSeconds, ""};
                      }
                      (void)AuditEvent(st->env, "web_login", "", Actor{who->name, who->role});
                      res.set_header("Set-Cookie", std::string(kCookie) + "=" + sid + "; Path=/approvals; HttpOnly; SameSite=Strict");
                      res.set_redirect("/approvals", 303);
                    }});

  routes.push_back({"POST", "/approvals/decide", [st](const httplib::Request& req, httplib::Response& res) {
                      std::string sid;
                      auto s = st->Find(req, &sid);
                      const std::string id = req.get_param_value("id"), decision = req.get_param_value("decision");
                      const std::string action = decision == "deny" ? "deny" : "approve";
                      if (!s) {
                        Refuse(st->env, "web-" + action, id, st->Claimed(req), "no approver session (log in at /approvals)");
                        Send(res, 401, "mt approvals: log in", LoginForm("Log in with an approver token first."));
                        return;
                      }
                      const Actor me{s->who.name, s->who.role};
                      if (!SameSecret(req.get_param_value("csrf"), s->csrf)) {
                        Refuse(st->env, "web-" + action, id, me, "CSRF token missing or wrong");
                        Send(res, 403, "mt approvals: refused", "<p>The form's CSRF token is missing or wrong; reload /approvals.</p>");
                        return;
                      }
                      if (decision != "approve" && decision != "deny") {
                        Refuse(st->env, "web-decide", id, me, "decision must be approve or deny");
                        Send(res, 400, "mt approvals", "<p>decision must be approve or deny</p>");
                        return;
                      }
                      approval::PlanRecord rec;
                      std::string err = Decide(st->env, id, req.get_param_value("hash"), decision == "approve", me, "web",
                                               "", &rec);
                      st->Flash(sid, err.empty() ? "Plan " + id + ": " + RecordText(rec) : "Plan " + id + ": refused: " + err);
                      res.set_redirect("/approvals", 303);
                    }});

  routes.push_back({"POST", "/approvals/logout", [st](const httplib::Request& req, httplib::Response& res) {
                      std::string sid;
                      auto s = st->Find(req, &sid);
                      if (s && SameSecret(req.get_param_value("csrf"), s->csrf)) {
                        std::lock_guard lock(st->mu);
                        st->sessions.erase(sid);
                      }
                      res.set_header("Set-Cookie", std::string(kCookie) + "=; Path=/approvals; HttpOnly; SameSite=Strict; Max-Age=0");
                      res.set_redirect("/approvals", 303);
                    }});
  return routes;
}

}  // namespace mt::tools
