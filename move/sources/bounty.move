/// Code3 bounties: a sponsor escrows a fungible asset (USDT) against a GitHub issue; workers accept it
/// (exclusive: one holder at a time for a hold time; contest: several workers) and submit PRs; the
/// registry's resolver reports the merged PR naming its author; after a cooling period anyone may trigger
/// the payout, which always goes to the winner. The sponsor may cancel before a PR, after the deadline
/// when nothing merged, or dispute during cooling.
///
/// Trust: the escrow is a resource account whose authentication key is rotated to zero by the framework
/// (no private key can sign for it); its signer capability lives in the Registry and only this module's
/// claim_payout / cancel_bounty use it. The package is immutable (Move.toml), so no later version can add
/// a function that does otherwise. The admin (fixed at initialize; use a multisig account) can only
/// change the resolver and the cooling period of bounties created afterwards.
///
/// The same rules, check for check and in the same order, as domain/contract.py (the embedded ledger runs
/// those); the interface is described in adapters/aptos_abi.json, and tests/unit/test_move_abi.py keeps
/// this file, that ABI and the Python side in step. No Move compiler runs in this project's CI: read
/// every change against the framework's sources.
module code3::bounty {
    use std::option::{Self, Option};
    use std::signer;
    use std::string::{Self, String};
    use std::vector;
    use aptos_framework::account::{Self, SignerCapability};
    use aptos_framework::event::{Self, EventHandle};
    use aptos_framework::fungible_asset::Metadata;
    use aptos_framework::object::{Self, Object};
    use aptos_framework::primary_fungible_store;
    use aptos_framework::timestamp;
    use aptos_std::table::{Self, Table};

    // Abort codes: equal to domain.contract.Abort, which maps each to the error code a client sees.

    /// No bounty with that id on chain.
    const E_BOUNTY_NOT_FOUND: u64 = 1;
    /// The bounty is not in a state that allows this (also: initialize called twice).
    const E_INVALID_STATE: u64 = 2;
    /// Only the bounty's sponsor may do this.
    const E_NOT_SPONSOR: u64 = 3;
    /// Only the registry's resolver may report a merge.
    const E_NOT_RESOLVER: u64 = 4;
    /// The cooling period has not ended.
    const E_COOLING: u64 = 5;
    /// The worker has not accepted this bounty.
    const E_NOT_ACCEPTED: u64 = 6;
    /// This sponsor already has a bounty for this issue hash.
    const E_ISSUE_HASH_EXISTS: u64 = 7;
    /// The sponsor's balance of the escrowed asset cannot cover the bounty (an asset this contract
    /// does not escrow counts as a balance of zero, as on the embedded ledger).
    const E_INSUFFICIENT_BALANCE: u64 = 8;
    /// The amount must be positive.
    const E_INVALID_AMOUNT: u64 = 9;
    /// No submission of that PR for this bounty.
    const E_PR_NOT_SUBMITTED: u64 = 10;
    /// A sponsor cannot accept their own bounty.
    const E_SPONSOR_CANNOT_ACCEPT: u64 = 11;
    /// This worker already submitted another PR.
    const E_PR_ALREADY_SUBMITTED: u64 = 12;
    /// Only the admin may do this (also: only the publisher may initialize).
    const E_NOT_ADMIN: u64 = 13;
    /// The named winner is not the worker who submitted that PR.
    const E_WRONG_WINNER: u64 = 14;
    /// Exclusive: another worker holds the task and the hold has not expired.
    const E_HELD_BY_OTHER: u64 = 15;
    /// Exclusive: the worker's hold has expired (accept again to renew it, if nobody else took it).
    const E_HOLD_EXPIRED: u64 = 16;
    /// Another worker already submitted this PR URL for the bounty.
    const E_PR_URL_TAKEN: u64 = 17;
    /// A PR was submitted: the sponsor may cancel only after the deadline.
    const E_DEADLINE_NOT_REACHED: u64 = 18;
    /// Cooling is over: the payout can no longer be disputed.
    const E_DISPUTE_WINDOW_CLOSED: u64 = 19;
    /// Contest: the bounty already has MAX_WORKERS workers.
    const E_TOO_MANY_WORKERS: u64 = 20;
    /// The deadline must lie in (now, now + MAX_DEADLINE_AHEAD].
    const E_INVALID_DEADLINE: u64 = 21;
    /// The mode must be MODE_EXCLUSIVE or MODE_CONTEST.
    const E_INVALID_MODE: u64 = 22;
    /// Exclusive: 0 < hold_seconds <= MAX_HOLD_SECONDS; contest: hold_seconds == 0.
    const E_INVALID_HOLD: u64 = 23;
    /// The cooling period must be in (0, MAX_COOLING_PERIOD].
    const E_INVALID_COOLING_PERIOD: u64 = 24;
    /// The repository must be 1 to MAX_REPO_BYTES bytes.
    const E_INVALID_REPO: u64 = 25;
    /// The issue hash must be 64 lowercase hex digits.
    const E_INVALID_ISSUE_HASH: u64 = 26;
    /// The PR URL must be 1 to MAX_PR_URL_BYTES bytes.
    const E_INVALID_PR_URL: u64 = 27;
    /// The commit must be 40 or 64 lowercase hex digits.
    const E_INVALID_COMMIT_SHA: u64 = 28;

    // Status values, as domain.contract.Status. MERGED is passed through within mark_merged.
    const STATUS_OPEN: u8 = 0;
    const STATUS_STARTED: u8 = 1;
    const STATUS_PR_SUBMITTED: u8 = 2;
    const STATUS_MERGED: u8 = 3;
    const STATUS_COOLING_DOWN: u8 = 4;
    const STATUS_PAID: u8 = 5;
    const STATUS_CANCELLED: u8 = 6;

    // Modes, as domain.contract.Mode.
    const MODE_EXCLUSIVE: u8 = 0;
    const MODE_CONTEST: u8 = 1;

    // Bounds, as domain.contract (seconds, counts, bytes). They keep every table entry far below the
    // 1 MiB write limit and every `now + x` far from u64 overflow.
    const MAX_COOLING_PERIOD: u64 = 7776000;
    const MAX_DEADLINE_AHEAD: u64 = 31536000;
    const MAX_HOLD_SECONDS: u64 = 2592000;
    const MAX_WORKERS: u64 = 64;
    const MAX_REPO_BYTES: u64 = 140;
    const MAX_PR_URL_BYTES: u64 = 300;
    const ISSUE_HASH_DIGITS: u64 = 64;

    const ESCROW_SEED: vector<u8> = b"code3::bounty::escrow";

    struct Submission has store, copy, drop {
        worker: address,
        pr_url: String,
        commit_sha: String,
    }

    /// A bounty as stored and as the views return it. The layout is final: the package is immutable.
    struct Bounty has store, copy, drop {
        bounty_id: u64,
        sponsor: address,
        repo: String,
        issue_hash: String,
        asset: String,
        amount: u64,
        created_at: u64,
        cooling_period: u64,
        deadline: u64,
        mode: u8,
        hold_seconds: u64,
        status: u8,
        workers: vector<address>,
        holder: Option<address>,
        hold_until: Option<u64>,
        submissions: vector<Submission>,
        winner: Option<address>,
        merged_pr: Option<String>,
        merged_at: Option<u64>,
        cooling_until: Option<u64>,
    }

    /// Issue hashes are keyed by sponsor: nobody can take another sponsor's hash.
    struct IssueKey has store, copy, drop {
        sponsor: address,
        issue_hash: String,
    }

    /// The registry's settings as the `get_config` view returns them.
    struct Config has store, copy, drop {
        admin: address,
        resolver: address,
        asset: String,
        escrow: address,
        cooling_period: u64,
    }

    /// The contract's state, at @code3.
    struct Registry has key {
        admin: address,
        resolver: address,
        asset: String,
        asset_metadata: Object<Metadata>,
        cooling_period: u64,
        escrow: SignerCapability,
        next_id: u64,
        bounties: Table<u64, Bounty>,
        by_issue_hash: Table<IssueKey, u64>,
    }

    /// One event handle per event type, at @code3. Handle events are what a fullnode's REST API lists
    /// (GET /accounts/{code3}/events/{code3}::bounty::BountyEvents/{field}); module events are listed
    /// only by an indexer, and chain sync must work against a plain fullnode.
    struct BountyEvents has key {
        bounty_created: EventHandle<BountyCreated>,
        bounty_accepted: EventHandle<BountyAccepted>,
        task_withdrawn: EventHandle<TaskWithdrawn>,
        pr_submitted: EventHandle<PRSubmitted>,
        bounty_merged: EventHandle<BountyMerged>,
        cooling_started: EventHandle<CoolingStarted>,
        bounty_paid: EventHandle<BountyPaid>,
        bounty_cancelled: EventHandle<BountyCancelled>,
    }

    #[event]
    struct BountyCreated has drop, store {
        bounty_id: u64,
        sponsor: address,
        repo: String,
        issue_hash: String,
        asset: String,
        amount: u64,
        cooling_period: u64,
        created_at: u64,
        deadline: u64,
        mode: u8,
        hold_seconds: u64,
    }

    /// `hold_until`: exclusive, the end of the worker's hold; contest, 0.
    #[event]
    struct BountyAccepted has drop, store {
        bounty_id: u64,
        worker: address,
        hold_until: u64,
    }

    #[event]
    struct TaskWithdrawn has drop, store {
        bounty_id: u64,
        worker: address,
    }

    #[event]
    struct PRSubmitted has drop, store {
        bounty_id: u64,
        worker: address,
        pr_url: String,
        commit_sha: String,
    }

    #[event]
    struct BountyMerged has drop, store {
        bounty_id: u64,
        winner: address,
        pr_url: String,
        merged_at: u64,
    }

    #[event]
    struct CoolingStarted has drop, store {
        bounty_id: u64,
        cooling_until: u64,
    }

    #[event]
    struct BountyPaid has drop, store {
        bounty_id: u64,
        winner: address,
        asset: String,
        amount: u64,
        paid_at: u64,
    }

    #[event]
    struct BountyCancelled has drop, store {
        bounty_id: u64,
        refund_to: address,
        amount: u64,
        disputed: bool,
    }

    /// Once, by the publisher: the admin (a multisig account is advised), the resolver who reports
    /// merges, which asset is escrowed (its symbol and metadata object) and the cooling period.
    /// The escrow is a resource account: the framework rotates its authentication key to zero, so only
    /// the signer capability kept here (used by claim_payout and cancel_bounty alone) can move its funds.
    public entry fun initialize(
        publisher: &signer, admin: address, resolver: address, asset: String, asset_metadata: address,
        cooling_period: u64
    ) {
        let publisher_addr = signer::address_of(publisher);
        assert!(publisher_addr == @code3, E_NOT_ADMIN);
        assert!(!exists<Registry>(publisher_addr), E_INVALID_STATE);
        assert!(cooling_period > 0 && cooling_period <= MAX_COOLING_PERIOD, E_INVALID_COOLING_PERIOD);
        let (_escrow_signer, escrow) = account::create_resource_account(publisher, ESCROW_SEED);
        move_to(publisher, Registry {
            admin,
            resolver,
            asset,
            asset_metadata: object::address_to_object<Metadata>(asset_metadata),
            cooling_period,
            escrow,
            next_id: 1,
            bounties: table::new(),
            by_issue_hash: table::new(),
        });
        move_to(publisher, BountyEvents {
            bounty_created: account::new_event_handle<BountyCreated>(publisher),
            bounty_accepted: account::new_event_handle<BountyAccepted>(publisher),
            task_withdrawn: account::new_event_handle<TaskWithdrawn>(publisher),
            pr_submitted: account::new_event_handle<PRSubmitted>(publisher),
            bounty_merged: account::new_event_handle<BountyMerged>(publisher),
            cooling_started: account::new_event_handle<CoolingStarted>(publisher),
            bounty_paid: account::new_event_handle<BountyPaid>(publisher),
            bounty_cancelled: account::new_event_handle<BountyCancelled>(publisher),
        });
    }

    /// The admin changes the cooling period of bounties created from now on.
    public entry fun set_cooling_period(admin: &signer, cooling_period: u64) acquires Registry {
        let registry = borrow_global_mut<Registry>(@code3);
        assert!(signer::address_of(admin) == registry.admin, E_NOT_ADMIN);
        assert!(cooling_period > 0 && cooling_period <= MAX_COOLING_PERIOD, E_INVALID_COOLING_PERIOD);
        registry.cooling_period = cooling_period;
    }

    /// The admin names the account that reports merges.
    public entry fun set_resolver(admin: &signer, resolver: address) acquires Registry {
        let registry = borrow_global_mut<Registry>(@code3);
        assert!(signer::address_of(admin) == registry.admin, E_NOT_ADMIN);
        registry.resolver = resolver;
    }

    /// Escrow `amount` of the asset for the issue `issue_hash` (unique per sponsor) until `deadline`
    /// (absolute unix seconds), in `mode` with `hold_seconds` of hold time (exclusive only).
    public entry fun create_bounty(
        sponsor: &signer, repo: String, issue_hash: String, asset: String, amount: u64, deadline: u64, mode: u8,
        hold_seconds: u64
    ) acquires Registry, BountyEvents {
        let length = string::length(&repo);
        assert!(length > 0 && length <= MAX_REPO_BYTES, E_INVALID_REPO);
        assert!(is_lower_hex(&issue_hash, ISSUE_HASH_DIGITS), E_INVALID_ISSUE_HASH);
        assert!(amount > 0, E_INVALID_AMOUNT);
        let now = timestamp::now_seconds();
        assert!(deadline > now && deadline <= now + MAX_DEADLINE_AHEAD, E_INVALID_DEADLINE);
        assert!(mode == MODE_EXCLUSIVE || mode == MODE_CONTEST, E_INVALID_MODE);
        if (mode == MODE_EXCLUSIVE) {
            assert!(hold_seconds > 0 && hold_seconds <= MAX_HOLD_SECONDS, E_INVALID_HOLD);
        } else {
            assert!(hold_seconds == 0, E_INVALID_HOLD);
        };
        let sponsor_addr = signer::address_of(sponsor);
        let registry = borrow_global_mut<Registry>(@code3);
        let key = IssueKey { sponsor: sponsor_addr, issue_hash };
        assert!(!table::contains(&registry.by_issue_hash, key), E_ISSUE_HASH_EXISTS);
        assert!(asset == registry.asset, E_INSUFFICIENT_BALANCE);
        assert!(primary_fungible_store::balance(sponsor_addr, registry.asset_metadata) >= amount,
            E_INSUFFICIENT_BALANCE);
        let escrow_addr = account::get_signer_capability_address(&registry.escrow);
        primary_fungible_store::transfer(sponsor, registry.asset_metadata, escrow_addr, amount);
        let bounty_id = registry.next_id;
        registry.next_id = bounty_id + 1;
        let cooling_period = registry.cooling_period;
        table::add(&mut registry.bounties, bounty_id, Bounty {
            bounty_id, sponsor: sponsor_addr, repo, issue_hash, asset, amount, created_at: now, cooling_period,
            deadline, mode, hold_seconds, status: STATUS_OPEN, workers: vector::empty(), holder: option::none(),
            hold_until: option::none(), submissions: vector::empty(), winner: option::none(),
            merged_pr: option::none(), merged_at: option::none(), cooling_until: option::none(),
        });
        table::add(&mut registry.by_issue_hash, key, bounty_id);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_created, BountyCreated {
            bounty_id, sponsor: sponsor_addr, repo, issue_hash, asset, amount, cooling_period, created_at: now,
            deadline, mode, hold_seconds,
        });
    }

    /// Exclusive: the worker becomes the holder for hold_seconds unless another worker's hold runs (the
    /// running holder accepting again changes nothing; an expired holder renews). Contest: the worker joins.
    public entry fun accept_bounty(worker: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let worker_addr = signer::address_of(worker);
        let bounty = bounty_mut(&mut borrow_global_mut<Registry>(@code3).bounties, bounty_id);
        assert!(worker_addr != bounty.sponsor, E_SPONSOR_CANNOT_ACCEPT);
        let status = bounty.status;
        let exclusive = bounty.mode == MODE_EXCLUSIVE;
        assert!(status == STATUS_OPEN || status == STATUS_STARTED || (!exclusive && status == STATUS_PR_SUBMITTED),
            E_INVALID_STATE);
        let now = timestamp::now_seconds();
        let hold_until = 0;
        if (exclusive) {
            if (holds(bounty, now)) {
                if (option::contains(&bounty.holder, &worker_addr)) return;
                abort E_HELD_BY_OTHER
            };
            hold_until = now + bounty.hold_seconds;
            bounty.holder = option::some(worker_addr);
            bounty.hold_until = option::some(hold_until);
            bounty.workers = vector::singleton(worker_addr);
        } else {
            if (vector::contains(&bounty.workers, &worker_addr)) return;
            assert!(vector::length(&bounty.workers) < MAX_WORKERS, E_TOO_MANY_WORKERS);
            vector::push_back(&mut bounty.workers, worker_addr);
        };
        if (status == STATUS_OPEN) bounty.status = STATUS_STARTED;
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_accepted, BountyAccepted {
            bounty_id, worker: worker_addr, hold_until,
        });
    }

    /// The worker gives the task back before submitting a PR (exclusive: releases the hold; contest:
    /// leaves). The last worker to leave a started bounty reopens it.
    public entry fun withdraw_task(worker: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let worker_addr = signer::address_of(worker);
        let bounty = bounty_mut(&mut borrow_global_mut<Registry>(@code3).bounties, bounty_id);
        assert!(bounty.status == STATUS_STARTED || bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        let (accepted, i) = vector::index_of(&bounty.workers, &worker_addr);
        assert!(accepted, E_NOT_ACCEPTED);
        let (submitted, _) = index_of_worker(&bounty.submissions, worker_addr);
        assert!(!submitted, E_INVALID_STATE);
        vector::remove(&mut bounty.workers, i);
        if (option::contains(&bounty.holder, &worker_addr)) {
            bounty.holder = option::none();
            bounty.hold_until = option::none();
        };
        if (bounty.status == STATUS_STARTED && vector::is_empty(&bounty.workers)) bounty.status = STATUS_OPEN;
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).task_withdrawn, TaskWithdrawn {
            bounty_id, worker: worker_addr,
        });
    }

    /// One PR per worker; a PR URL belongs to its first submitter; exclusive: the holder only, while the
    /// hold runs. Submitting the same PR again changes nothing.
    public entry fun submit_pr(
        worker: &signer, bounty_id: u64, pr_url: String, commit_sha: String
    ) acquires Registry, BountyEvents {
        let worker_addr = signer::address_of(worker);
        let bounty = bounty_mut(&mut borrow_global_mut<Registry>(@code3).bounties, bounty_id);
        let length = string::length(&pr_url);
        assert!(length > 0 && length <= MAX_PR_URL_BYTES, E_INVALID_PR_URL);
        assert!(is_lower_hex(&commit_sha, 40) || is_lower_hex(&commit_sha, 64), E_INVALID_COMMIT_SHA);
        assert!(bounty.status == STATUS_STARTED || bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        let (found, i) = index_of_worker(&bounty.submissions, worker_addr);
        if (found) {
            assert!(vector::borrow(&bounty.submissions, i).pr_url == pr_url, E_PR_ALREADY_SUBMITTED);
            return
        };
        assert!(vector::contains(&bounty.workers, &worker_addr), E_NOT_ACCEPTED);
        if (bounty.mode == MODE_EXCLUSIVE) {
            assert!(holds(bounty, timestamp::now_seconds()), E_HOLD_EXPIRED);
        };
        let (taken, _) = index_of_pr(&bounty.submissions, &pr_url);
        assert!(!taken, E_PR_URL_TAKEN);
        vector::push_back(&mut bounty.submissions, Submission { worker: worker_addr, pr_url, commit_sha });
        bounty.status = STATUS_PR_SUBMITTED;
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).pr_submitted, PRSubmitted {
            bounty_id, worker: worker_addr, pr_url, commit_sha,
        });
    }

    /// The resolver reports a merged PR naming its author (checked off chain against the forge), who must
    /// be the PR's submitter: the first report wins and the cooling period starts.
    public entry fun mark_merged(
        resolver: &signer, bounty_id: u64, pr_url: String, winner: address
    ) acquires Registry, BountyEvents {
        let registry = borrow_global_mut<Registry>(@code3);
        let registry_resolver = registry.resolver;
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(signer::address_of(resolver) == registry_resolver, E_NOT_RESOLVER);
        assert!(bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        let (found, i) = index_of_pr(&bounty.submissions, &pr_url);
        assert!(found, E_PR_NOT_SUBMITTED);
        assert!(vector::borrow(&bounty.submissions, i).worker == winner, E_WRONG_WINNER);
        let now = timestamp::now_seconds();
        let cooling_until = now + bounty.cooling_period;
        bounty.status = STATUS_MERGED;
        bounty.winner = option::some(winner);
        bounty.merged_pr = option::some(pr_url);
        bounty.merged_at = option::some(now);
        bounty.cooling_until = option::some(cooling_until);
        bounty.status = STATUS_COOLING_DOWN;
        let events = borrow_global_mut<BountyEvents>(@code3);
        event::emit_event(&mut events.bounty_merged, BountyMerged { bounty_id, winner, pr_url, merged_at: now });
        event::emit_event(&mut events.cooling_started, CoolingStarted { bounty_id, cooling_until });
    }

    /// After cooling anyone may trigger the payout (a scheduler needs no winner's key); the escrow always
    /// goes to the winner.
    public entry fun claim_payout(_caller: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(bounty.status == STATUS_COOLING_DOWN, E_INVALID_STATE);
        let now = timestamp::now_seconds();
        assert!(now >= *option::borrow(&bounty.cooling_until), E_COOLING);
        bounty.status = STATUS_PAID;
        let winner = *option::borrow(&bounty.winner);
        let amount = bounty.amount;
        let asset = bounty.asset;
        pay_from_escrow(registry, winner, amount);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_paid, BountyPaid {
            bounty_id, winner, asset, amount, paid_at: now,
        });
    }

    /// The sponsor takes the escrow back: before any PR at any time; with a submitted PR only after the
    /// deadline (no worker can freeze the escrow); during cooling only before cooling_until (a dispute).
    public entry fun cancel_bounty(sponsor: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let sponsor_addr = signer::address_of(sponsor);
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(sponsor_addr == bounty.sponsor, E_NOT_SPONSOR);
        let status = bounty.status;
        let now = timestamp::now_seconds();
        if (status == STATUS_PR_SUBMITTED) {
            assert!(now >= bounty.deadline, E_DEADLINE_NOT_REACHED);
        } else if (status == STATUS_COOLING_DOWN) {
            assert!(now < *option::borrow(&bounty.cooling_until), E_DISPUTE_WINDOW_CLOSED);
        } else {
            assert!(status == STATUS_OPEN || status == STATUS_STARTED, E_INVALID_STATE);
        };
        bounty.status = STATUS_CANCELLED;
        let amount = bounty.amount;
        pay_from_escrow(registry, sponsor_addr, amount);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_cancelled, BountyCancelled {
            bounty_id, refund_to: sponsor_addr, amount, disputed: status == STATUS_COOLING_DOWN,
        });
    }

    #[view]
    public fun get_bounty(bounty_id: u64): Option<Bounty> acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        if (!table::contains(&registry.bounties, bounty_id)) return option::none();
        option::some(*table::borrow(&registry.bounties, bounty_id))
    }

    #[view]
    public fun get_bounty_by_issue_hash(sponsor: address, issue_hash: String): Option<Bounty> acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        let key = IssueKey { sponsor, issue_hash };
        if (!table::contains(&registry.by_issue_hash, key)) return option::none();
        let bounty_id = *table::borrow(&registry.by_issue_hash, key);
        option::some(*table::borrow(&registry.bounties, bounty_id))
    }

    /// Ids are assigned 1, 2, 3… and never removed.
    #[view]
    public fun list_bounty_ids(): vector<u64> acquires Registry {
        let next_id = borrow_global<Registry>(@code3).next_id;
        let ids = vector::empty<u64>();
        let id = 1;
        while (id < next_id) {
            vector::push_back(&mut ids, id);
            id = id + 1;
        };
        ids
    }

    #[view]
    public fun get_config(): Config acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        Config {
            admin: registry.admin,
            resolver: registry.resolver,
            asset: registry.asset,
            escrow: account::get_signer_capability_address(&registry.escrow),
            cooling_period: registry.cooling_period,
        }
    }

    fun bounty_mut(bounties: &mut Table<u64, Bounty>, bounty_id: u64): &mut Bounty {
        assert!(table::contains(bounties, bounty_id), E_BOUNTY_NOT_FOUND);
        table::borrow_mut(bounties, bounty_id)
    }

    fun pay_from_escrow(registry: &Registry, to: address, amount: u64) {
        let escrow_signer = account::create_signer_with_capability(&registry.escrow);
        primary_fungible_store::transfer(&escrow_signer, registry.asset_metadata, to, amount);
    }

    /// Exclusive: a holder whose hold has not expired.
    fun holds(bounty: &Bounty, now: u64): bool {
        option::is_some(&bounty.holder) && option::is_some(&bounty.hold_until)
            && now < *option::borrow(&bounty.hold_until)
    }

    /// Exactly `digits` characters, each 0-9 or a-f.
    fun is_lower_hex(text: &String, digits: u64): bool {
        let bytes = string::bytes(text);
        if (vector::length(bytes) != digits) return false;
        let i = 0;
        while (i < digits) {
            let c = *vector::borrow(bytes, i);
            if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
            i = i + 1;
        };
        true
    }

    fun index_of_worker(submissions: &vector<Submission>, worker: address): (bool, u64) {
        let i = 0;
        let n = vector::length(submissions);
        while (i < n) {
            if (vector::borrow(submissions, i).worker == worker) return (true, i);
            i = i + 1;
        };
        (false, 0)
    }

    fun index_of_pr(submissions: &vector<Submission>, pr_url: &String): (bool, u64) {
        let i = 0;
        let n = vector::length(submissions);
        while (i < n) {
            if (&vector::borrow(submissions, i).pr_url == pr_url) return (true, i);
            i = i + 1;
        };
        (false, 0)
    }
}
