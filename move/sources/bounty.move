/// Code3 bounties: a sponsor escrows a fungible asset (USDT) against a GitHub issue, workers accept it
/// and submit PRs, the first merged PR wins, and after a cooling period the winner claims the escrow.
///
/// The same rules as domain/contract.py (the embedded ledger runs those); the interface is described in
/// move/abi.json, and tests/unit/test_move_abi.py keeps this file, that ABI and the Python side in step.
module code3::bounty {
    use std::option::{Self, Option};
    use std::signer;
    use std::string::String;
    use std::vector;
    use aptos_framework::account;
    use aptos_framework::event::{Self, EventHandle};
    use aptos_framework::fungible_asset::Metadata;
    use aptos_framework::object::{Self, ExtendRef, Object};
    use aptos_framework::primary_fungible_store;
    use aptos_framework::timestamp;
    use aptos_std::table::{Self, Table};

    // Abort codes: equal to domain.contract.Abort, which maps each to the error code a client sees.

    /// No bounty with that id on chain.
    const E_BOUNTY_NOT_FOUND: u64 = 1;
    /// The bounty is not in a state that allows this (also: initialize called twice).
    const E_INVALID_STATE: u64 = 2;
    /// Only the bounty's sponsor may do this (also: only the publisher may initialize).
    const E_NOT_SPONSOR: u64 = 3;
    /// Only the winner (the worker whose PR merged first) may claim.
    const E_NOT_WINNER: u64 = 4;
    /// The cooling period has not ended.
    const E_COOLING: u64 = 5;
    /// The worker has not accepted this bounty.
    const E_NOT_ACCEPTED: u64 = 6;
    /// A bounty for this issue hash already exists.
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

    // Status values, as domain.contract.Status. MERGED is passed through within mark_merged.
    const STATUS_OPEN: u8 = 0;
    const STATUS_STARTED: u8 = 1;
    const STATUS_PR_SUBMITTED: u8 = 2;
    const STATUS_MERGED: u8 = 3;
    const STATUS_COOLING_DOWN: u8 = 4;
    const STATUS_PAID: u8 = 5;
    const STATUS_CANCELLED: u8 = 6;

    struct Submission has store, copy, drop {
        worker: address,
        pr_url: String,
        commit_sha: String,
    }

    /// A bounty as stored and as the views return it.
    struct Bounty has store, copy, drop {
        bounty_id: u64,
        sponsor: address,
        repo: String,
        issue_hash: String,
        asset: String,
        amount: u64,
        created_at: u64,
        cooling_period: u64,
        status: u8,
        workers: vector<address>,
        submissions: vector<Submission>,
        winner: Option<address>,
        merged_pr: Option<String>,
        merged_at: Option<u64>,
        cooling_until: Option<u64>,
    }

    /// The contract's state, at @code3. The escrow is the primary store of an object the module controls.
    struct Registry has key {
        asset: String,
        asset_metadata: Object<Metadata>,
        cooling_period: u64,
        escrow: ExtendRef,
        next_id: u64,
        bounties: Table<u64, Bounty>,
        by_issue_hash: Table<String, u64>,
    }

    /// One event handle per event type, at @code3. Handle events are what a fullnode's REST API lists
    /// (GET /accounts/{code3}/events/{code3}::bounty::BountyEvents/{field}); module events are listed
    /// only by an indexer, and chain sync must work against a plain fullnode.
    struct BountyEvents has key {
        bounty_created: EventHandle<BountyCreated>,
        bounty_accepted: EventHandle<BountyAccepted>,
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
    }

    #[event]
    struct BountyAccepted has drop, store {
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

    /// Once, by the publisher: which asset is escrowed (its symbol and metadata object) and the cooling period.
    public entry fun initialize(admin: &signer, asset: String, asset_metadata: address, cooling_period: u64) {
        let admin_addr = signer::address_of(admin);
        assert!(admin_addr == @code3, E_NOT_SPONSOR);
        assert!(!exists<Registry>(admin_addr), E_INVALID_STATE);
        let escrow = object::create_named_object(admin, b"code3::bounty::escrow");
        move_to(admin, Registry {
            asset,
            asset_metadata: object::address_to_object<Metadata>(asset_metadata),
            cooling_period,
            escrow: object::generate_extend_ref(&escrow),
            next_id: 1,
            bounties: table::new(),
            by_issue_hash: table::new(),
        });
        move_to(admin, BountyEvents {
            bounty_created: account::new_event_handle<BountyCreated>(admin),
            bounty_accepted: account::new_event_handle<BountyAccepted>(admin),
            pr_submitted: account::new_event_handle<PRSubmitted>(admin),
            bounty_merged: account::new_event_handle<BountyMerged>(admin),
            cooling_started: account::new_event_handle<CoolingStarted>(admin),
            bounty_paid: account::new_event_handle<BountyPaid>(admin),
            bounty_cancelled: account::new_event_handle<BountyCancelled>(admin),
        });
    }

    /// Escrow `amount` of the asset for the issue `issue_hash` (unique on chain).
    public entry fun create_bounty(
        sponsor: &signer, repo: String, issue_hash: String, asset: String, amount: u64
    ) acquires Registry, BountyEvents {
        let registry = borrow_global_mut<Registry>(@code3);
        assert!(!table::contains(&registry.by_issue_hash, issue_hash), E_ISSUE_HASH_EXISTS);
        assert!(amount > 0, E_INVALID_AMOUNT);
        let sponsor_addr = signer::address_of(sponsor);
        assert!(asset == registry.asset, E_INSUFFICIENT_BALANCE);
        assert!(primary_fungible_store::balance(sponsor_addr, registry.asset_metadata) >= amount,
            E_INSUFFICIENT_BALANCE);
        let escrow_addr = object::address_from_extend_ref(&registry.escrow);
        primary_fungible_store::transfer(sponsor, registry.asset_metadata, escrow_addr, amount);
        let bounty_id = registry.next_id;
        registry.next_id = bounty_id + 1;
        let now = timestamp::now_seconds();
        let cooling_period = registry.cooling_period;
        table::add(&mut registry.bounties, bounty_id, Bounty {
            bounty_id, sponsor: sponsor_addr, repo, issue_hash, asset, amount, created_at: now, cooling_period,
            status: STATUS_OPEN, workers: vector::empty(), submissions: vector::empty(),
            winner: option::none(), merged_pr: option::none(), merged_at: option::none(),
            cooling_until: option::none(),
        });
        table::add(&mut registry.by_issue_hash, issue_hash, bounty_id);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_created, BountyCreated {
            bounty_id, sponsor: sponsor_addr, repo, issue_hash, asset, amount, cooling_period, created_at: now,
        });
    }

    /// Several workers may accept; accepting twice changes nothing.
    public entry fun accept_bounty(worker: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let worker_addr = signer::address_of(worker);
        let bounty = bounty_mut(&mut borrow_global_mut<Registry>(@code3).bounties, bounty_id);
        assert!(worker_addr != bounty.sponsor, E_SPONSOR_CANNOT_ACCEPT);
        let status = bounty.status;
        assert!(status == STATUS_OPEN || status == STATUS_STARTED || status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        if (vector::contains(&bounty.workers, &worker_addr)) return;
        vector::push_back(&mut bounty.workers, worker_addr);
        if (status == STATUS_OPEN) bounty.status = STATUS_STARTED;
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_accepted, BountyAccepted {
            bounty_id, worker: worker_addr,
        });
    }

    /// One PR per worker; submitting the same PR again changes nothing.
    public entry fun submit_pr(
        worker: &signer, bounty_id: u64, pr_url: String, commit_sha: String
    ) acquires Registry, BountyEvents {
        let worker_addr = signer::address_of(worker);
        let bounty = bounty_mut(&mut borrow_global_mut<Registry>(@code3).bounties, bounty_id);
        assert!(bounty.status == STATUS_STARTED || bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        assert!(vector::contains(&bounty.workers, &worker_addr), E_NOT_ACCEPTED);
        let (found, i) = index_of_worker(&bounty.submissions, worker_addr);
        if (found) {
            assert!(vector::borrow(&bounty.submissions, i).pr_url == pr_url, E_PR_ALREADY_SUBMITTED);
            return
        };
        vector::push_back(&mut bounty.submissions, Submission { worker: worker_addr, pr_url, commit_sha });
        bounty.status = STATUS_PR_SUBMITTED;
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).pr_submitted, PRSubmitted {
            bounty_id, worker: worker_addr, pr_url, commit_sha,
        });
    }

    /// The sponsor reports a merged PR: the first one wins and the cooling period starts.
    public entry fun mark_merged(sponsor: &signer, bounty_id: u64, pr_url: String) acquires Registry, BountyEvents {
        let sponsor_addr = signer::address_of(sponsor);
        let bounty = bounty_mut(&mut borrow_global_mut<Registry>(@code3).bounties, bounty_id);
        assert!(sponsor_addr == bounty.sponsor, E_NOT_SPONSOR);
        assert!(bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        let (found, i) = index_of_pr(&bounty.submissions, &pr_url);
        assert!(found, E_PR_NOT_SUBMITTED);
        let winner = vector::borrow(&bounty.submissions, i).worker;
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

    /// The winner takes the escrow once cooling is over.
    public entry fun claim_payout(winner: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let winner_addr = signer::address_of(winner);
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(bounty.status == STATUS_COOLING_DOWN, E_INVALID_STATE);
        assert!(option::contains(&bounty.winner, &winner_addr), E_NOT_WINNER);
        let now = timestamp::now_seconds();
        assert!(now >= *option::borrow(&bounty.cooling_until), E_COOLING);
        bounty.status = STATUS_PAID;
        let amount = bounty.amount;
        let asset = bounty.asset;
        pay_from_escrow(registry, winner_addr, amount);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_paid, BountyPaid {
            bounty_id, winner: winner_addr, asset, amount, paid_at: now,
        });
    }

    /// The sponsor cancels an unmerged bounty, or disputes one during cooling: the escrow is refunded.
    public entry fun cancel_bounty(sponsor: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let sponsor_addr = signer::address_of(sponsor);
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(sponsor_addr == bounty.sponsor, E_NOT_SPONSOR);
        let status = bounty.status;
        assert!(status == STATUS_OPEN || status == STATUS_STARTED || status == STATUS_COOLING_DOWN, E_INVALID_STATE);
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
    public fun get_bounty_by_issue_hash(issue_hash: String): Option<Bounty> acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        if (!table::contains(&registry.by_issue_hash, issue_hash)) return option::none();
        let bounty_id = *table::borrow(&registry.by_issue_hash, issue_hash);
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

    fun bounty_mut(bounties: &mut Table<u64, Bounty>, bounty_id: u64): &mut Bounty {
        assert!(table::contains(bounties, bounty_id), E_BOUNTY_NOT_FOUND);
        table::borrow_mut(bounties, bounty_id)
    }

    fun pay_from_escrow(registry: &Registry, to: address, amount: u64) {
        let escrow_signer = object::generate_signer_for_extending(&registry.escrow);
        primary_fungible_store::transfer(&escrow_signer, registry.asset_metadata, to, amount);
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
