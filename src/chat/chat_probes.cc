#include "chat/chat_probes.h"

#include <set>

namespace stoker {
namespace {

using jinja::Body;
using jinja::Expr;
using jinja::Stmt;

constexpr char kGenerationPrompt[] = "add_generation_prompt";

// The names a template binds (set, for, macros and their parameters, loop) and how often it reads
// add_generation_prompt.
struct Names {
  std::set<std::string> bound = {"loop"};
  int generation_prompt_reads = 0;
};

void Collect(const Expr* e, Names* n) {
  if (!e) return;
  if (e->kind == Expr::Kind::kName && e->name == kGenerationPrompt) ++n->generation_prompt_reads;
  for (const auto& a : e->args) Collect(a.get(), n);
  for (const auto& [k, a] : e->kwargs) Collect(a.get(), n);
}

void Collect(const Body& body, Names* n) {
  for (const auto& s : body) {
    Collect(s->expr.get(), n);
    Collect(s->cond.get(), n);
    for (const std::string& t : s->targets) n->bound.insert(t);
    if (s->kind == Stmt::Kind::kMacro) n->bound.insert(s->name);
    for (const auto& [p, def] : s->params) {
      n->bound.insert(p);
      Collect(def.get(), n);
    }
    for (const auto& [cond, b] : s->branches) {
      Collect(cond.get(), n);
      Collect(b, n);
    }
    Collect(s->body, n);
    Collect(s->else_body, n);
  }
}

// An expression whose value is the same in every rendering with the same kwargs.
bool Constant(const Expr* e, const Names& n) {
  if (!e) return true;
  if (e->kind == Expr::Kind::kCall) return false;  // strftime_now, raise_exception, macros
  if (e->kind == Expr::Kind::kName &&
      (n.bound.count(e->name) || e->name == "messages" || e->name == "tools" ||
       e->name == "documents" || e->name == kGenerationPrompt)) {
    return false;
  }
  for (const auto& a : e->args) {
    if (!Constant(a.get(), n)) return false;
  }
  for (const auto& [k, a] : e->kwargs) {
    if (!Constant(a.get(), n)) return false;
  }
  return true;
}

bool Constant(const Body& body, const Names& n) {
  for (const auto& s : body) {
    switch (s->kind) {
      case Stmt::Kind::kText:
        break;
      case Stmt::Kind::kOutput:
        if (!Constant(s->expr.get(), n)) return false;
        break;
      case Stmt::Kind::kIf:
        for (const auto& [cond, b] : s->branches) {
          if (!Constant(cond.get(), n) || !Constant(b, n)) return false;
        }
        if (!Constant(s->else_body, n)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

}  // namespace

bool GenerationPromptIgnoresMessages(const Body& body) {
  size_t last = body.size();
  while (last > 0 && body[last - 1]->kind == Stmt::Kind::kText) --last;
  if (last == 0) return false;
  const Stmt& s = *body[last - 1];
  if (s.kind != Stmt::Kind::kIf || s.branches.size() != 1) return false;
  const Expr& test = *s.branches[0].first;
  if (test.kind != Expr::Kind::kName || test.name != kGenerationPrompt) return false;
  Names n;
  Collect(body, &n);
  return n.generation_prompt_reads == 1 && Constant(s.branches[0].second, n) &&
         Constant(s.else_body, n);
}

std::shared_ptr<const ChatProbes> ChatProbeCache::Find(const std::string& kwargs_key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_kwargs_.find(kwargs_key);
  return it == by_kwargs_.end() ? nullptr : it->second;
}

std::shared_ptr<const ChatProbes> ChatProbeCache::Put(const std::string& kwargs_key,
                                                      std::shared_ptr<const ChatProbes> probes) {
  std::lock_guard<std::mutex> lock(mu_);
  // Bounded for callers that vary the kwargs with every conversation: they render the probes
  // again, as before the cache.
  if (by_kwargs_.size() >= kMaxEntries && !by_kwargs_.count(kwargs_key)) by_kwargs_.clear();
  return by_kwargs_.emplace(kwargs_key, std::move(probes)).first->second;
}

}  // namespace stoker
