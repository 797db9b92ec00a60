"""worldspec.runner: run protocols, agents, budgets, metrics, run logs, reports.

Modules, in the order data flows through them (each imports only those above it):

  models       the async model interface, provider errors, retries, litellm, scripted models
  logcodec     the compact encoding of log lines and its decoder
  log          the append-only run log, its one reader (load_run), resume, the lock
  cache        request keys and the on-disk response cache
  answers      answers from replies, rule reports and their grading
  metrics      M_t, sigma, Best@n, Mean@n, worst, G, steps, regressions; box and pool summaries
  sandbox      untrusted evaluation (probes, answers, rule reports, certification) in worker
               processes under wall-clock deadlines
  runtime      one model call (log replay, cache, per-model limit, retries, logging); world calls
  agents       the built-in agents: oracle, manual, replay, memorise, pool strategies
  config       RunConfig: what a run is asked to do, and its identity in the log header
  protocols/   the registry of run protocols by World.protocol: milestone (trajectory.py plays
               one trajectory, conditions.py feeds it), turn@shot, pool; each plays its
               sessions and plans its dry run
  report       trajectories.jsonl, summary.json, report.md, PNG curves: one loader, one table writer
  experiment   the orchestrator: lineup, log, runtime, sessions, outputs
  progress     the live display
  options      the options of `worldspec run` and how they become a RunConfig
  cli          `worldspec run`, `worldspec report`
  authoring    a model drafts a world, `check` steers it (authoring.py); `worldspec author` (author.py)
  view         `worldspec view`: a run as one self-contained HTML page
  episode      one milestone trajectory stepped by Inspect AI or Gymnasium (worldspec.inspect, worldspec.gym)
"""
