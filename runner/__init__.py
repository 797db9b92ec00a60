"""worldspec.runner: exploration protocols, agents, budgets, metrics, run logs, reports.

Modules, in the order data flows through them:

  models      the async model interface (litellm, built-in agents, scripted, replay)
  cache       request keys and the on-disk response cache
  runtime     one model call: log replay, cache, per-model limit, retries, logging
  protocol    one trajectory: rounds, tool calls, milestone forks, conditions
  experiment  a run: every (system, condition, trajectory) concurrently; dry-run plan
  metrics     M_t, sigma, Best@n, Mean@n, worst, G, largest-step share, regressions
  log         the append-only run log, resume, lock
  report      trajectories.jsonl, summary.json, report.md, PNG curves
  progress    live display
  cli         `worldspec run`, `worldspec report`
"""
