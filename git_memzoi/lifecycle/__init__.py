"""The proposal lifecycle: propose, approve, apply, reject, all-or-nothing under repo-lifecycle.lock.

plan_* functions are pure (a snapshot in, a Plan out); transaction.install is the only code that
mutates, through a journal that recovery.repair replays or rolls back after a crash.

Entry points: inbox.submit / inbox.submit_draft (a draft.PacketDraft, from propose.draft) / inbox.approve /
inbox.list_items / inbox.show, apply.apply, reject.reject, recovery.repair / recovery.pending_journals.
"""
