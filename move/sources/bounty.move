/// Code3 bounties (v2): a sponsor escrows a fungible asset (USDT) against a GitHub issue of one repository;
/// anyone may add to the pool (funders, each refunded their own share); workers accept it (exclusive: one
/// holder at a time for a hold time; contest: any number of entrants) and submit PRs. The bounty's resolver
/// (fixed when the bounty is created) reports the merged PR by its repository id, number and author's forge
/// id: the winner is the address linked to that forge account, who must have submitted that PR, and one merged
/// PR settles one bounty. During cooling the sponsor may dispute, and the resolver rules (pay, refund, or a
/// split in basis points); after cooling anyone may trigger the payout, which goes to the winner (or the
/// winner's split among linked accounts). Links between a forge account and an address are recorded by a
/// resolver, and checked here against an ed25519 signature by the address's key; a resolver may then act for
/// a linked account (the `_for` functions). Tips move the tipper's own funds to a linked account, once per
/// nonce.
///
/// Trust: the escrow is a resource account whose authentication key is rotated to zero by the framework
/// (no private key can sign for it); its signer capability lives in the Registry and only `pay_from_escrow`
/// uses it, called by claim_payout, cancel_bounty, withdraw_refund and rule alone. The package is immutable
/// (Move.toml), so no later version can add a function that does otherwise. The admin (fixed at initialize;
/// use a multisig account) can only change the resolver and the periods of bounties created afterwards.
///
/// The same rules, check for check and in the same order, as domain/contract.py (the embedded ledger runs
/// those); the interface is described in adapters/aptos_abi.json, and tests/unit/test_move_abi.py keeps
/// this file, that ABI and the Python side in step (and parses this file with a tree-sitter Move grammar).
/// No Move compiler runs in this project's CI: read every change against the framework's sources.
module code3::bounty {
    use std::bcs;
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
    use aptos_std::ed25519;
    use aptos_std::table::{Self, Table};

    // Abort codes: equal to domain.contract_terms.Abort, which maps each to the error code a client sees.

    /// No bounty with that id on chain.
    const E_BOUNTY_NOT_FOUND: u64 = 1;
    /// The bounty is not in a state that allows this (also: initialize called twice).
    const E_INVALID_STATE: u64 = 2;
    /// Only the bounty's sponsor may do this.
    const E_NOT_SPONSOR: u64 = 3;
    /// Only the bounty's resolver may do this.
    const E_NOT_RESOLVER: u64 = 4;
    /// The cooling period has not ended.
    const E_COOLING: u64 = 5;
    /// The worker has not accepted this bounty.
    const E_NOT_ACCEPTED: u64 = 6;
    /// This sponsor already has a bounty for this issue hash.
    const E_ISSUE_HASH_EXISTS: u64 = 7;
    /// The balance of the escrowed asset cannot cover the amount (an asset this contract does not escrow
    /// counts as a balance of zero, as on the embedded ledger).
    const E_INSUFFICIENT_BALANCE: u64 = 8;
    /// The amount must be positive.
    const E_INVALID_AMOUNT: u64 = 9;
    /// No live submission of that PR by that worker (or: the party never submitted a PR).
    const E_PR_NOT_SUBMITTED: u64 = 10;
    /// A sponsor cannot accept their own bounty.
    const E_SPONSOR_CANNOT_ACCEPT: u64 = 11;
    /// This worker already has another live PR.
    const E_PR_ALREADY_SUBMITTED: u64 = 12;
    /// Only the admin may do this (also: only the publisher may initialize).
    const E_NOT_ADMIN: u64 = 13;
    /// The account is not linked to a forge account under this bounty's resolver.
    const E_NOT_LINKED: u64 = 14;
    /// Exclusive: another worker holds the task and the hold has not expired.
    const E_HELD_BY_OTHER: u64 = 15;
    /// Exclusive: the worker's hold has expired (accept again to renew it, if nobody else took it).
    const E_HOLD_EXPIRED: u64 = 16;
    /// This merged PR already settled a bounty.
    const E_PR_ALREADY_SETTLED: u64 = 17;
    /// A live PR was submitted: the sponsor may cancel only after the deadline.
    const E_DEADLINE_NOT_REACHED: u64 = 18;
    /// The time for this dispute or ruling is over.
    const E_DISPUTE_WINDOW_CLOSED: u64 = 19;
    /// The bounty already keeps MAX_SUBMISSIONS submissions.
    const E_TOO_MANY_SUBMISSIONS: u64 = 20;
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
    /// The PR URL must be 1 to MAX_PR_URL_BYTES bytes, and a reported PR number above 0.
    const E_INVALID_PR_URL: u64 = 27;
    /// The commit must be 40 or 64 lowercase hex digits.
    const E_INVALID_COMMIT_SHA: u64 = 28;
    /// A submitted PR is still live: the refund waits for the resolver or for the deadline's grace.
    const E_SUBMISSION_LIVE: u64 = 29;
    /// A dispute is open on this bounty.
    const E_DISPUTED: u64 = 30;
    /// No dispute is open on this bounty.
    const E_NO_DISPUTE: u64 = 31;
    /// A reason must be 1 to MAX_REASON_BYTES bytes (a rejection: REJECT_NOT_IN_REPO to
    /// REJECT_SETTLED_ELSEWHERE).
    const E_INVALID_REASON: u64 = 32;
    /// A ruling's share is 0 to BPS basis points.
    const E_INVALID_SHARE: u64 = 33;
    /// This nonce was used already by this account.
    const E_NONCE_USED: u64 = 34;
    /// Nothing to withdraw: no refund, or this funder's share was withdrawn.
    const E_NO_REFUND: u64 = 35;
    /// A split names 1 to MAX_SPLIT different recipients, each with a share of 1 to MAX_SHARE.
    const E_INVALID_SPLIT: u64 = 36;
    /// The link statement is not signed by the key that authenticates the account.
    const E_INVALID_SIGNATURE: u64 = 37;
    /// A link names a forge user id above 0 and a login of 1 to MAX_LOGIN_BYTES bytes.
    const E_INVALID_LINK: u64 = 38;
    /// The PR is not in the bounty's repository.
    const E_WRONG_REPO: u64 = 39;
    /// A submitted PR was closed unmerged recently: its worker may dispute until the grace ends.
    const E_CLOSED_RECENTLY: u64 = 40;
    /// Only the bounty's winner may do this.
    const E_NOT_WINNER: u64 = 41;
    /// The dispute period must be in (0, MAX_DISPUTE_PERIOD].
    const E_INVALID_DISPUTE_PERIOD: u64 = 42;

    // Status values, as domain.contract_terms.Status. MERGED is passed through within mark_merged.
    const STATUS_OPEN: u8 = 0;
    const STATUS_STARTED: u8 = 1;
    const STATUS_PR_SUBMITTED: u8 = 2;
    const STATUS_MERGED: u8 = 3;
    const STATUS_COOLING_DOWN: u8 = 4;
    const STATUS_PAID: u8 = 5;
    const STATUS_CANCELLED: u8 = 6;

    // Modes, as domain.contract_terms.Mode.
    const MODE_EXCLUSIVE: u8 = 0;
    const MODE_CONTEST: u8 = 1;

    // Submission states, as domain.contract_terms.SubmissionState.
    const STATE_LIVE: u8 = 0;
    const STATE_CLOSED: u8 = 1;

    // Why the resolver rejects a submission, as domain.contract_terms.Rejection (1 to 5).
    const REJECT_NOT_IN_REPO: u8 = 1;
    const REJECT_WRONG_BASE: u8 = 2;
    const REJECT_NOT_AUTHOR: u8 = 3;
    const REJECT_CLOSED: u8 = 4;
    const REJECT_SETTLED_ELSEWHERE: u8 = 5;

    // Bounds, as domain.contract_terms (seconds, counts, bytes). They keep every table entry far below the
    // 1 MiB write limit, every loop short, and every `now + x` far from u64 overflow.
    const MAX_COOLING_PERIOD: u64 = 7776000;
    const MAX_DISPUTE_PERIOD: u64 = 7776000;
    const REFUND_GRACE: u64 = 604800;
    const MAX_DEADLINE_AHEAD: u64 = 31536000;
    const MAX_HOLD_SECONDS: u64 = 2592000;
    const MAX_SUBMISSIONS: u64 = 64;
    const MAX_SPLIT: u64 = 10;
    const MAX_SHARE: u64 = 1000000;
    const BPS: u64 = 10000;
    const MAX_REPO_BYTES: u64 = 140;
    const MAX_PR_URL_BYTES: u64 = 300;
    const MAX_REASON_BYTES: u64 = 500;
    const MAX_LOGIN_BYTES: u64 = 39;
    const MAX_PAGE: u64 = 100;
    const ISSUE_HASH_DIGITS: u64 = 64;
    const COMMIT_SHA1_DIGITS: u64 = 40;
    const COMMIT_SHA256_DIGITS: u64 = 64;
    const PUBLIC_KEY_BYTES: u64 = 32;
    const SIGNATURE_BYTES: u64 = 64;

    /// What an account's key signs to be linked (domain.links.link_message): this prefix, then the BCS
    /// encodings of the forge user id (u64, 8 bytes little-endian) and of the address (32 bytes).
    const LINK_PREFIX: vector<u8> = b"CODE3::LINK::v1::";

    const ESCROW_SEED: vector<u8> = b"code3::bounty::escrow";

    /// A worker's submission; `state` is STATE_LIVE or STATE_CLOSED (seen closed unmerged by the resolver).
    struct Submission has store, copy, drop {
        worker: address,
        pr_url: String,
        commit_sha: String,
        submitted_at: u64,
        state: u8,
    }

    /// An open dispute: who opened it, why, when, and the time by which the resolver must rule.
    struct Dispute has store, copy, drop {
        by: address,
        reason: String,
        opened_at: u64,
        rule_by: u64,
    }

    /// The winner's division of the payout among linked accounts, by relative shares.
    struct Split has store, copy, drop {
        recipients: vector<address>,
        shares: vector<u64>,
    }

    /// A bounty as stored and as the views return it (fields: domain.contract.BountyState's, in order). The
    /// layout is final: the package is immutable. Contest entrants, contributions, nonces, links and settled
    /// PRs are tables of the Registry, so that no crowd can make a bounty too large to write.
    struct Bounty has store, copy, drop {
        bounty_id: u64,
        sponsor: address,
        resolver: address,
        repo: String,
        repo_id: u64,
        issue_hash: String,
        asset: String,
        amount: u64,
        pool: u64,
        funders: u64,
        created_at: u64,
        cooling_period: u64,
        dispute_period: u64,
        deadline: u64,
        mode: u8,
        hold_seconds: u64,
        status: u8,
        entrants: u64,
        holder: Option<address>,
        hold_until: Option<u64>,
        submissions: vector<Submission>,
        winner: Option<address>,
        merged_pr: Option<String>,
        merged_pr_number: Option<u64>,
        merged_at: Option<u64>,
        cooling_until: Option<u64>,
        dispute: Option<Dispute>,
        split: Option<Split>,
        refund_total: u64,
        refunded: u64,
        last_closed_at: u64,
    }

    /// Issue hashes are keyed by sponsor: nobody can take another sponsor's hash.
    struct IssueKey has store, copy, drop {
        sponsor: address,
        issue_hash: String,
    }

    /// A contest's entrant (an exclusive bounty's holder lives in the bounty itself).
    struct EntrantKey has store, copy, drop {
        bounty_id: u64,
        worker: address,
    }

    /// What a funder put into a bounty and has not withdrawn.
    struct FunderKey has store, copy, drop {
        bounty_id: u64,
        funder: address,
    }

    /// A nonce an account used (fund_bounty, tip): a re-signed transaction cannot move funds twice.
    struct NonceKey has store, copy, drop {
        account: address,
        nonce: u64,
    }

    /// A link, by the resolver that recorded it and the forge account's numeric id.
    struct LinkKey has store, copy, drop {
        resolver: address,
        forge_user_id: u64,
    }

    /// The same link, by the resolver and the linked address (one forge account per address per resolver).
    struct AccountKey has store, copy, drop {
        resolver: address,
        account: address,
    }

    /// A merged PR, by the forge's repository id and the PR's number.
    struct PrKey has store, copy, drop {
        repo_id: u64,
        pr_number: u64,
    }

    /// The registry's settings as the `get_config` view returns them.
    struct Config has store, copy, drop {
        admin: address,
        resolver: address,
        asset: String,
        escrow: address,
        cooling_period: u64,
        dispute_period: u64,
    }

    /// The contract's state, at @code3.
    struct Registry has key {
        admin: address,
        resolver: address,
        asset: String,
        asset_metadata: Object<Metadata>,
        cooling_period: u64,
        dispute_period: u64,
        escrow: SignerCapability,
        next_id: u64,
        bounties: Table<u64, Bounty>,
        by_issue_hash: Table<IssueKey, u64>,
        entrants: Table<EntrantKey, bool>,
        contributions: Table<FunderKey, u64>,
        nonces: Table<NonceKey, bool>,
        links: Table<LinkKey, address>,
        linked_ids: Table<AccountKey, u64>,
        settled_prs: Table<PrKey, u64>,
    }

    /// One event handle per event type, at @code3. Handle events are what a fullnode's REST API lists
    /// (GET /accounts/{code3}/events/{code3}::bounty::BountyEvents/{field}); module events are listed
    /// only by an indexer, and chain sync must work against a plain fullnode.
    struct BountyEvents has key {
        bounty_created: EventHandle<BountyCreated>,
        bounty_funded: EventHandle<BountyFunded>,
        bounty_accepted: EventHandle<BountyAccepted>,
        task_withdrawn: EventHandle<TaskWithdrawn>,
        pr_submitted: EventHandle<PRSubmitted>,
        submission_rejected: EventHandle<SubmissionRejected>,
        bounty_merged: EventHandle<BountyMerged>,
        cooling_started: EventHandle<CoolingStarted>,
        dispute_opened: EventHandle<DisputeOpened>,
        dispute_ruled: EventHandle<DisputeRuled>,
        split_set: EventHandle<SplitSet>,
        bounty_paid: EventHandle<BountyPaid>,
        bounty_cancelled: EventHandle<BountyCancelled>,
        refund_withdrawn: EventHandle<RefundWithdrawn>,
        tipped: EventHandle<Tipped>,
        account_linked: EventHandle<AccountLinked>,
    }

    #[event]
    struct BountyCreated has drop, store {
        bounty_id: u64,
        sponsor: address,
        resolver: address,
        repo: String,
        repo_id: u64,
        issue_hash: String,
        asset: String,
        amount: u64,
        cooling_period: u64,
        dispute_period: u64,
        created_at: u64,
        deadline: u64,
        mode: u8,
        hold_seconds: u64,
    }

    #[event]
    struct BountyFunded has drop, store {
        bounty_id: u64,
        funder: address,
        amount: u64,
        pool: u64,
        nonce: u64,
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
    struct SubmissionRejected has drop, store {
        bounty_id: u64,
        worker: address,
        pr_url: String,
        reason: u8,
    }

    #[event]
    struct BountyMerged has drop, store {
        bounty_id: u64,
        winner: address,
        pr_url: String,
        merged_at: u64,
        author_id: u64,
        repo_id: u64,
        pr_number: u64,
    }

    #[event]
    struct CoolingStarted has drop, store {
        bounty_id: u64,
        cooling_until: u64,
    }

    #[event]
    struct DisputeOpened has drop, store {
        bounty_id: u64,
        by: address,
        reason: String,
        rule_by: u64,
    }

    #[event]
    struct DisputeRuled has drop, store {
        bounty_id: u64,
        claimant: address,
        share_bps: u64,
        paid: u64,
        refunded: u64,
    }

    #[event]
    struct SplitSet has drop, store {
        bounty_id: u64,
        recipients: vector<address>,
        shares: vector<u64>,
    }

    /// `winner`: who is paid (the claimant of a ruling); `recipients`/`amounts`: where it went (the split).
    #[event]
    struct BountyPaid has drop, store {
        bounty_id: u64,
        winner: address,
        asset: String,
        amount: u64,
        paid_at: u64,
        recipients: vector<address>,
        amounts: vector<u64>,
    }

    #[event]
    struct BountyCancelled has drop, store {
        bounty_id: u64,
        refund_to: address,
        amount: u64,
        disputed: bool,
    }

    #[event]
    struct RefundWithdrawn has drop, store {
        bounty_id: u64,
        funder: address,
        amount: u64,
    }

    #[event]
    struct Tipped has drop, store {
        bounty_id: u64,
        tipper: address,
        to: address,
        asset: String,
        amount: u64,
        nonce: u64,
    }

    /// No bounty id: a link holds for every bounty of its resolver.
    #[event]
    struct AccountLinked has drop, store {
        resolver: address,
        forge_user_id: u64,
        login: String,
        account: address,
    }

    // --- the registry (admin) ---------------------------------------------------------------------------

    /// Once, by the publisher: the admin (a multisig account is advised), the resolver of new bounties, which
    /// asset is escrowed (its symbol and metadata object) and the periods new bounties get.
    /// The escrow is a resource account: the framework rotates its authentication key to zero, so only
    /// the signer capability kept here (used by pay_from_escrow alone) can move its funds.
    public entry fun initialize(
        publisher: &signer, admin: address, resolver: address, asset: String, asset_metadata: address,
        cooling_period: u64, dispute_period: u64
    ) {
        let publisher_addr = signer::address_of(publisher);
        assert!(publisher_addr == @code3, E_NOT_ADMIN);
        assert!(!exists<Registry>(publisher_addr), E_INVALID_STATE);
        assert!(cooling_period > 0 && cooling_period <= MAX_COOLING_PERIOD, E_INVALID_COOLING_PERIOD);
        assert!(dispute_period > 0 && dispute_period <= MAX_DISPUTE_PERIOD, E_INVALID_DISPUTE_PERIOD);
        let (_escrow_signer, escrow) = account::create_resource_account(publisher, ESCROW_SEED);
        move_to(publisher, Registry {
            admin,
            resolver,
            asset,
            asset_metadata: object::address_to_object<Metadata>(asset_metadata),
            cooling_period,
            dispute_period,
            escrow,
            next_id: 1,
            bounties: table::new(),
            by_issue_hash: table::new(),
            entrants: table::new(),
            contributions: table::new(),
            nonces: table::new(),
            links: table::new(),
            linked_ids: table::new(),
            settled_prs: table::new(),
        });
        move_to(publisher, BountyEvents {
            bounty_created: account::new_event_handle<BountyCreated>(publisher),
            bounty_funded: account::new_event_handle<BountyFunded>(publisher),
            bounty_accepted: account::new_event_handle<BountyAccepted>(publisher),
            task_withdrawn: account::new_event_handle<TaskWithdrawn>(publisher),
            pr_submitted: account::new_event_handle<PRSubmitted>(publisher),
            submission_rejected: account::new_event_handle<SubmissionRejected>(publisher),
            bounty_merged: account::new_event_handle<BountyMerged>(publisher),
            cooling_started: account::new_event_handle<CoolingStarted>(publisher),
            dispute_opened: account::new_event_handle<DisputeOpened>(publisher),
            dispute_ruled: account::new_event_handle<DisputeRuled>(publisher),
            split_set: account::new_event_handle<SplitSet>(publisher),
            bounty_paid: account::new_event_handle<BountyPaid>(publisher),
            bounty_cancelled: account::new_event_handle<BountyCancelled>(publisher),
            refund_withdrawn: account::new_event_handle<RefundWithdrawn>(publisher),
            tipped: account::new_event_handle<Tipped>(publisher),
            account_linked: account::new_event_handle<AccountLinked>(publisher),
        });
    }

    /// The admin changes the cooling period of bounties created from now on.
    public entry fun set_cooling_period(admin: &signer, cooling_period: u64) acquires Registry {
        let registry = borrow_global_mut<Registry>(@code3);
        assert!(signer::address_of(admin) == registry.admin, E_NOT_ADMIN);
        assert!(cooling_period > 0 && cooling_period <= MAX_COOLING_PERIOD, E_INVALID_COOLING_PERIOD);
        registry.cooling_period = cooling_period;
    }

    /// The admin changes the dispute period of bounties created from now on.
    public entry fun set_dispute_period(admin: &signer, dispute_period: u64) acquires Registry {
        let registry = borrow_global_mut<Registry>(@code3);
        assert!(signer::address_of(admin) == registry.admin, E_NOT_ADMIN);
        assert!(dispute_period > 0 && dispute_period <= MAX_DISPUTE_PERIOD, E_INVALID_DISPUTE_PERIOD);
        registry.dispute_period = dispute_period;
    }

    /// The admin names the resolver of bounties created from now on (a bounty keeps its own: no arbiter is
    /// swapped in the middle of a dispute).
    public entry fun set_resolver(admin: &signer, resolver: address) acquires Registry {
        let registry = borrow_global_mut<Registry>(@code3);
        assert!(signer::address_of(admin) == registry.admin, E_NOT_ADMIN);
        registry.resolver = resolver;
    }

    // --- identity links ---------------------------------------------------------------------------------

    /// The signer (a resolver) records that the forge account `forge_user_id` (shown as `login`) is `account`.
    /// `signature` is `account`'s key's ed25519 signature of link_message(forge_user_id, account), checked here
    /// (so no resolver links an address without its key); that the forge account published it is what the
    /// resolver checked on the forge. A new link of either side replaces the old one (a key rotated, an
    /// account renamed).
    public entry fun link_account(
        resolver: &signer, forge_user_id: u64, login: String, account: address, public_key: vector<u8>,
        signature: vector<u8>
    ) acquires Registry, BountyEvents {
        let resolver_addr = signer::address_of(resolver);
        let login_length = string::length(&login);
        assert!(forge_user_id > 0 && login_length > 0 && login_length <= MAX_LOGIN_BYTES, E_INVALID_LINK);
        assert!(link_proof_ok(forge_user_id, account, public_key, signature), E_INVALID_SIGNATURE);
        let registry = borrow_global_mut<Registry>(@code3);
        let by_id = LinkKey { resolver: resolver_addr, forge_user_id };
        if (table::contains(&registry.links, by_id)) {
            let old_account = table::remove(&mut registry.links, by_id);
            table::remove(&mut registry.linked_ids, AccountKey { resolver: resolver_addr, account: old_account });
        };
        let by_account = AccountKey { resolver: resolver_addr, account };
        if (table::contains(&registry.linked_ids, by_account)) {
            let old_id = table::remove(&mut registry.linked_ids, by_account);
            table::remove(&mut registry.links, LinkKey { resolver: resolver_addr, forge_user_id: old_id });
        };
        table::add(&mut registry.links, by_id, account);
        table::add(&mut registry.linked_ids, by_account, forge_user_id);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).account_linked, AccountLinked {
            resolver: resolver_addr, forge_user_id, login, account,
        });
    }

    /// The statement's proof: 32 bytes of ed25519 public key whose authentication key is `account`'s current
    /// one, and its 64-byte signature of link_message(forge_user_id, account). The lengths are checked first,
    /// because the framework's constructors abort on any other length (with the framework's code, not ours).
    /// Framework calls, checked against aptos-core's sources:
    /// - aptos-stdlib/sources/cryptography/ed25519.move: `new_unvalidated_public_key_from_bytes(bytes:
    ///   vector<u8>): UnvalidatedPublicKey` and `new_signature_from_bytes(bytes: vector<u8>): Signature` (both
    ///   abort unless 32 / 64 bytes), `unvalidated_public_key_to_authentication_key(pk: &UnvalidatedPublicKey):
    ///   vector<u8>` (sha3-256 of the key and the scheme byte 0), `signature_verify_strict(signature:
    ///   &Signature, public_key: &UnvalidatedPublicKey, message: vector<u8>): bool` (false for a small-order
    ///   key or a bad signature, never an abort);
    /// - aptos-framework/sources/account/account.move (formerly sources/account.move): `exists_at(addr:
    ///   address): bool` and `get_authentication_key(addr: address): vector<u8>`, which aborts for an address
    ///   with no Account resource unless the default-account-resource feature is on: hence exists_at first
    ///   (an account that never transacted, where that feature is off, cannot be linked yet);
    /// - move-stdlib/sources/bcs.move: `to_bytes<MoveValue>(v: &MoveValue): vector<u8>`.
    fun link_proof_ok(forge_user_id: u64, account: address, public_key: vector<u8>, signature: vector<u8>): bool {
        if (vector::length(&public_key) != PUBLIC_KEY_BYTES || vector::length(&signature) != SIGNATURE_BYTES) {
            return false
        };
        let key = ed25519::new_unvalidated_public_key_from_bytes(public_key);
        if (!account::exists_at(account)) return false;
        if (ed25519::unvalidated_public_key_to_authentication_key(&key) != account::get_authentication_key(account)) {
            return false
        };
        let proof = ed25519::new_signature_from_bytes(signature);
        ed25519::signature_verify_strict(&proof, &key, link_message(forge_user_id, account))
    }

    /// domain.links.link_message: LINK_PREFIX, then BCS(u64 forge user id), then BCS(address).
    fun link_message(forge_user_id: u64, account: address): vector<u8> {
        let message = LINK_PREFIX;
        vector::append(&mut message, bcs::to_bytes(&forge_user_id));
        vector::append(&mut message, bcs::to_bytes(&account));
        message
    }

    /// The account linked to `forge_user_id` under the bounty's resolver, for the bounty's resolver acting on
    /// its behalf (a command in a comment, whose author's key is on their own machine).
    fun actor_of(resolver: &signer, bounty_id: u64, forge_user_id: u64): address acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        let bounty_resolver = bounty_ref(&registry.bounties, bounty_id).resolver;
        assert!(signer::address_of(resolver) == bounty_resolver, E_NOT_RESOLVER);
        let key = LinkKey { resolver: bounty_resolver, forge_user_id };
        assert!(table::contains(&registry.links, key), E_NOT_LINKED);
        *table::borrow(&registry.links, key)
    }

    // --- bounties ---------------------------------------------------------------------------------------

    /// Escrow `amount` of the asset for the issue `issue_hash` (unique per sponsor) of `repo` (`repo_id`: the
    /// forge's id of it; 0: compared by the id the forge gives its name when a merge is reported) until
    /// `deadline` (absolute unix seconds), in `mode` with `hold_seconds` of hold time (exclusive only).
    public entry fun create_bounty(
        sponsor: &signer, repo: String, issue_hash: String, asset: String, amount: u64, deadline: u64, mode: u8,
        hold_seconds: u64, repo_id: u64
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
        let resolver = registry.resolver;
        let cooling_period = registry.cooling_period;
        let dispute_period = registry.dispute_period;
        table::add(&mut registry.bounties, bounty_id, Bounty {
            bounty_id, sponsor: sponsor_addr, resolver, repo, repo_id, issue_hash, asset, amount, pool: amount,
            funders: 1, created_at: now, cooling_period, dispute_period, deadline, mode, hold_seconds,
            status: STATUS_OPEN, entrants: 0, holder: option::none(), hold_until: option::none(),
            submissions: vector::empty(), winner: option::none(), merged_pr: option::none(),
            merged_pr_number: option::none(), merged_at: option::none(), cooling_until: option::none(),
            dispute: option::none(), split: option::none(), refund_total: 0, refunded: 0, last_closed_at: 0,
        });
        table::add(&mut registry.by_issue_hash, key, bounty_id);
        table::add(&mut registry.contributions, FunderKey { bounty_id, funder: sponsor_addr }, amount);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_created, BountyCreated {
            bounty_id, sponsor: sponsor_addr, resolver, repo, repo_id, issue_hash, asset, amount, cooling_period,
            dispute_period, created_at: now, deadline, mode, hold_seconds,
        });
    }

    /// Anyone adds to the pool before a merge; `nonce` (unique per funder) makes a re-signed transaction
    /// unable to fund twice.
    public entry fun fund_bounty(funder: &signer, bounty_id: u64, amount: u64, nonce: u64)
    acquires Registry, BountyEvents {
        let funder_addr = signer::address_of(funder);
        let registry = borrow_global_mut<Registry>(@code3);
        let held = contribution_of(&registry.contributions, bounty_id, funder_addr);
        let nonce_key = NonceKey { account: funder_addr, nonce };
        let used = table::contains(&registry.nonces, nonce_key);
        let balance = primary_fungible_store::balance(funder_addr, registry.asset_metadata);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(amount > 0, E_INVALID_AMOUNT);
        assert!(!used, E_NONCE_USED);
        assert!(is_live_status(bounty.status), E_INVALID_STATE);
        assert!(balance >= amount, E_INSUFFICIENT_BALANCE);
        bounty.pool = bounty.pool + amount;
        if (held == 0) bounty.funders = bounty.funders + 1;
        let pool = bounty.pool;
        table::add(&mut registry.nonces, nonce_key, true);
        let escrow_addr = account::get_signer_capability_address(&registry.escrow);
        primary_fungible_store::transfer(funder, registry.asset_metadata, escrow_addr, amount);
        table::upsert(&mut registry.contributions, FunderKey { bounty_id, funder: funder_addr }, held + amount);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_funded, BountyFunded {
            bounty_id, funder: funder_addr, amount, pool, nonce,
        });
    }

    /// Exclusive: the worker becomes the holder for hold_seconds unless another worker's hold runs (the
    /// running holder accepting again changes nothing; an expired holder renews). Contest: the worker enters.
    public entry fun accept_bounty(worker: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        do_accept(signer::address_of(worker), bounty_id);
    }

    /// The bounty's resolver accepts for the account linked to `forge_user_id`.
    public entry fun accept_for(resolver: &signer, bounty_id: u64, forge_user_id: u64)
    acquires Registry, BountyEvents {
        let actor = actor_of(resolver, bounty_id, forge_user_id);
        do_accept(actor, bounty_id);
    }

    fun do_accept(worker: address, bounty_id: u64) acquires Registry, BountyEvents {
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        let entered = table::contains(&registry.entrants, EntrantKey { bounty_id, worker });
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(worker != bounty.sponsor, E_SPONSOR_CANNOT_ACCEPT);
        let status = bounty.status;
        let exclusive = bounty.mode == MODE_EXCLUSIVE;
        assert!(status == STATUS_OPEN || status == STATUS_STARTED || (!exclusive && status == STATUS_PR_SUBMITTED),
            E_INVALID_STATE);
        let hold_until = 0;
        if (exclusive) {
            if (holds(bounty, now)) {
                if (option::contains(&bounty.holder, &worker)) return;
                abort E_HELD_BY_OTHER
            };
            hold_until = now + bounty.hold_seconds;
            bounty.holder = option::some(worker);
            bounty.hold_until = option::some(hold_until);
            bounty.entrants = 1;
        } else {
            if (entered) return;
            bounty.entrants = bounty.entrants + 1;
        };
        if (status == STATUS_OPEN) bounty.status = STATUS_STARTED;
        if (!exclusive) table::add(&mut registry.entrants, EntrantKey { bounty_id, worker }, true);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_accepted, BountyAccepted {
            bounty_id, worker, hold_until,
        });
    }

    /// The worker gives the task back while no PR of theirs is live (exclusive: releases the hold; contest:
    /// leaves). The last worker to leave a started bounty reopens it.
    public entry fun withdraw_task(worker: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        do_withdraw(signer::address_of(worker), bounty_id);
    }

    /// The bounty's resolver gives the task back for the account linked to `forge_user_id`.
    public entry fun withdraw_for(resolver: &signer, bounty_id: u64, forge_user_id: u64)
    acquires Registry, BountyEvents {
        let actor = actor_of(resolver, bounty_id, forge_user_id);
        do_withdraw(actor, bounty_id);
    }

    fun do_withdraw(worker: address, bounty_id: u64) acquires Registry, BountyEvents {
        let registry = borrow_global_mut<Registry>(@code3);
        let entrant = EntrantKey { bounty_id, worker };
        let entered = table::contains(&registry.entrants, entrant);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(bounty.status == STATUS_STARTED || bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        let exclusive = bounty.mode == MODE_EXCLUSIVE;
        let accepted = if (exclusive) option::contains(&bounty.holder, &worker) else entered;
        assert!(accepted, E_NOT_ACCEPTED);
        let (found, i) = index_of_worker(&bounty.submissions, worker);
        assert!(!found || vector::borrow(&bounty.submissions, i).state != STATE_LIVE, E_INVALID_STATE);
        if (exclusive) {
            bounty.holder = option::none();
            bounty.hold_until = option::none();
        };
        bounty.entrants = bounty.entrants - 1;
        if (bounty.status == STATUS_STARTED && bounty.entrants == 0) bounty.status = STATUS_OPEN;
        if (entered) {
            table::remove(&mut registry.entrants, entrant);
        };
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).task_withdrawn, TaskWithdrawn {
            bounty_id, worker,
        });
    }

    /// One live PR per worker; several workers may name the same PR (only its linked author can win, so a
    /// front-runner locks nobody out); exclusive: the holder only, while the hold runs. The same PR again
    /// changes nothing; a worker whose PR was closed may submit another (it takes the closed one's place).
    public entry fun submit_pr(
        worker: &signer, bounty_id: u64, pr_url: String, commit_sha: String
    ) acquires Registry, BountyEvents {
        do_submit(signer::address_of(worker), bounty_id, pr_url, commit_sha);
    }

    /// The bounty's resolver submits a PR for the account linked to `forge_user_id`.
    public entry fun submit_pr_for(
        resolver: &signer, bounty_id: u64, forge_user_id: u64, pr_url: String, commit_sha: String
    ) acquires Registry, BountyEvents {
        let actor = actor_of(resolver, bounty_id, forge_user_id);
        do_submit(actor, bounty_id, pr_url, commit_sha);
    }

    fun do_submit(worker: address, bounty_id: u64, pr_url: String, commit_sha: String)
    acquires Registry, BountyEvents {
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        let entered = table::contains(&registry.entrants, EntrantKey { bounty_id, worker });
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        let length = string::length(&pr_url);
        assert!(length > 0 && length <= MAX_PR_URL_BYTES, E_INVALID_PR_URL);
        assert!(is_lower_hex(&commit_sha, COMMIT_SHA1_DIGITS) || is_lower_hex(&commit_sha, COMMIT_SHA256_DIGITS),
            E_INVALID_COMMIT_SHA);
        assert!(bounty.status == STATUS_STARTED || bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        let (found, i) = index_of_worker(&bounty.submissions, worker);
        if (found) {
            let previous = vector::borrow(&bounty.submissions, i);
            if (previous.state == STATE_LIVE) {
                if (previous.pr_url == pr_url) return;
                abort E_PR_ALREADY_SUBMITTED
            };
        };
        let exclusive = bounty.mode == MODE_EXCLUSIVE;
        let accepted = if (exclusive) option::contains(&bounty.holder, &worker) else entered;
        assert!(accepted, E_NOT_ACCEPTED);
        if (exclusive) {
            assert!(holds(bounty, now), E_HOLD_EXPIRED);
        };
        assert!(found || vector::length(&bounty.submissions) < MAX_SUBMISSIONS, E_TOO_MANY_SUBMISSIONS);
        let submission = Submission { worker, pr_url, commit_sha, submitted_at: now, state: STATE_LIVE };
        if (found) {
            let closed = vector::borrow_mut(&mut bounty.submissions, i);
            *closed = submission;
        } else {
            vector::push_back(&mut bounty.submissions, submission);
        };
        bounty.status = STATUS_PR_SUBMITTED;
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).pr_submitted, PRSubmitted {
            bounty_id, worker, pr_url, commit_sha,
        });
    }

    /// The bounty's resolver, having looked at the forge, rejects a live submission: junk (not a PR of the
    /// repository, the wrong base, not the submitter's own PR, settled elsewhere) is removed and blocks
    /// nothing; a PR closed unmerged is kept as STATE_CLOSED, so its worker may still dispute during the grace.
    public entry fun reject_submission(resolver: &signer, bounty_id: u64, worker: address, reason: u8)
    acquires Registry, BountyEvents {
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(signer::address_of(resolver) == bounty.resolver, E_NOT_RESOLVER);
        assert!(reason >= REJECT_NOT_IN_REPO && reason <= REJECT_SETTLED_ELSEWHERE, E_INVALID_REASON);
        assert!(bounty.status == STATUS_STARTED || bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        let (found, i) = index_of_worker(&bounty.submissions, worker);
        assert!(found && vector::borrow(&bounty.submissions, i).state == STATE_LIVE, E_PR_NOT_SUBMITTED);
        let pr_url = vector::borrow(&bounty.submissions, i).pr_url;
        if (reason == REJECT_CLOSED) {
            let closed = vector::borrow_mut(&mut bounty.submissions, i);
            closed.state = STATE_CLOSED;
            bounty.last_closed_at = now;
        } else {
            vector::remove(&mut bounty.submissions, i);
        };
        if (!has_live(&bounty.submissions)) bounty.status = STATUS_STARTED;
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).submission_rejected, SubmissionRejected {
            bounty_id, worker, pr_url, reason,
        });
    }

    /// The bounty's resolver reports that PR `pr_number` of repository `repo_id` merged, written by forge user
    /// `author_id` (as the forge shows it): the winner is the address linked to that forge user under this
    /// bounty's resolver, who must have a live submission of `pr_url`; one merged PR settles one bounty. The
    /// cooling period starts; a worker's open dispute ends with the merge.
    public entry fun mark_merged(
        resolver: &signer, bounty_id: u64, pr_url: String, author_id: u64, repo_id: u64, pr_number: u64
    ) acquires Registry, BountyEvents {
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        // what the rule reads from the tables is read first, as the embedded ledger does
        let author = LinkKey { resolver: bounty_ref(&registry.bounties, bounty_id).resolver, forge_user_id: author_id };
        let linked = table::contains(&registry.links, author);
        let winner = if (linked) *table::borrow(&registry.links, author) else @0x0;
        let pr = PrKey { repo_id, pr_number };
        let settled = table::contains(&registry.settled_prs, pr);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(signer::address_of(resolver) == bounty.resolver, E_NOT_RESOLVER);
        assert!(bounty.status == STATUS_PR_SUBMITTED, E_INVALID_STATE);
        assert!(repo_id != 0 && (bounty.repo_id == 0 || repo_id == bounty.repo_id), E_WRONG_REPO);
        assert!(pr_number != 0, E_INVALID_PR_URL);
        assert!(linked, E_NOT_LINKED);
        assert!(is_live_submission(&bounty.submissions, winner, &pr_url), E_PR_NOT_SUBMITTED);
        assert!(!settled, E_PR_ALREADY_SETTLED);
        // cooling_period <= MAX_COOLING_PERIOD and now is the chain's clock: no u64 overflow
        let cooling_until = now + bounty.cooling_period;
        bounty.status = STATUS_MERGED;
        bounty.winner = option::some(winner);
        bounty.merged_pr = option::some(pr_url);
        bounty.merged_pr_number = option::some(pr_number);
        bounty.merged_at = option::some(now);
        bounty.cooling_until = option::some(cooling_until);
        bounty.dispute = option::none();
        bounty.status = STATUS_COOLING_DOWN;
        table::add(&mut registry.settled_prs, pr, bounty_id);
        let events = borrow_global_mut<BountyEvents>(@code3);
        event::emit_event(&mut events.bounty_merged, BountyMerged {
            bounty_id, winner, pr_url, merged_at: now, author_id, repo_id, pr_number,
        });
        event::emit_event(&mut events.cooling_started, CoolingStarted { bounty_id, cooling_until });
    }

    /// During cooling the winner divides the payout among linked accounts (co-authors) by relative shares.
    /// Setting it again replaces it.
    public entry fun set_split(winner: &signer, bounty_id: u64, recipients: vector<address>, shares: vector<u64>)
    acquires Registry, BountyEvents {
        do_set_split(signer::address_of(winner), bounty_id, recipients, shares);
    }

    /// The bounty's resolver sets the split for the account linked to `forge_user_id` (who must be the winner).
    public entry fun set_split_for(
        resolver: &signer, bounty_id: u64, forge_user_id: u64, recipients: vector<address>, shares: vector<u64>
    ) acquires Registry, BountyEvents {
        let actor = actor_of(resolver, bounty_id, forge_user_id);
        do_set_split(actor, bounty_id, recipients, shares);
    }

    fun do_set_split(winner: address, bounty_id: u64, recipients: vector<address>, shares: vector<u64>)
    acquires Registry, BountyEvents {
        let registry = borrow_global_mut<Registry>(@code3);
        let resolver = bounty_ref(&registry.bounties, bounty_id).resolver;
        let linked = all_linked(&registry.linked_ids, resolver, &recipients);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(bounty.status == STATUS_COOLING_DOWN, E_INVALID_STATE);
        assert!(option::contains(&bounty.winner, &winner), E_NOT_WINNER);
        check_split(&recipients, &shares);
        assert!(linked, E_NOT_LINKED);
        bounty.split = option::some(Split { recipients, shares });
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).split_set, SplitSet {
            bounty_id, recipients, shares,
        });
    }

    /// Once cooling is over, and any dispute's time to be ruled with it, anyone may trigger the payout (a
    /// scheduler needs no winner's key); the pool always goes to the winner (or the winner's split).
    public entry fun claim_payout(_caller: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(bounty.status == STATUS_COOLING_DOWN, E_INVALID_STATE);
        assert!(now >= *option::borrow(&bounty.cooling_until), E_COOLING);
        assert!(option::is_none(&bounty.dispute) || now >= option::borrow(&bounty.dispute).rule_by, E_DISPUTED);
        bounty.status = STATUS_PAID;
        bounty.dispute = option::none();
        let winner = *option::borrow(&bounty.winner);
        let pool = bounty.pool;
        let paid = payout(bounty, winner, pool, now);
        pay_all(&registry.escrow, registry.asset_metadata, &paid.recipients, &paid.amounts);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_paid, paid);
    }

    /// The sponsor ends an unmerged bounty and takes their own share of the pool back at once (each other
    /// funder withdraws theirs). Before any live PR: at any time. With a live PR: not before the deadline, and
    /// after it only once the resolver has seen every submitted PR closed unmerged, or deadline + REFUND_GRACE
    /// has passed. A PR closed unmerged, or a worker's dispute, also holds the refund for the grace (never past
    /// the deadline's). After a merge there is no cancel: the sponsor disputes instead.
    public entry fun cancel_bounty(sponsor: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let sponsor_addr = signer::address_of(sponsor);
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        let held = contribution_of(&registry.contributions, bounty_id, sponsor_addr);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(sponsor_addr == bounty.sponsor, E_NOT_SPONSOR);
        assert!(is_live_status(bounty.status), E_INVALID_STATE);
        // deadline <= creation + MAX_DEADLINE_AHEAD and last_closed_at is a past now: no u64 overflow
        if (now < bounty.deadline + REFUND_GRACE) {
            if (has_live(&bounty.submissions)) {
                assert!(now >= bounty.deadline, E_DEADLINE_NOT_REACHED);
                abort E_SUBMISSION_LIVE
            };
            assert!(option::is_none(&bounty.dispute), E_DISPUTED);
            assert!(bounty.last_closed_at == 0 || now >= bounty.last_closed_at + REFUND_GRACE, E_CLOSED_RECENTLY);
        };
        bounty.status = STATUS_CANCELLED;
        bounty.dispute = option::none();
        bounty.refund_total = bounty.pool;
        let amount = bounty.pool;
        let share = take_refund(bounty, held);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_cancelled, BountyCancelled {
            bounty_id, refund_to: sponsor_addr, amount, disputed: false,
        });
        if (held > 0) refund_funder(registry, bounty_id, sponsor_addr, share);
    }

    /// A funder of a refunded bounty takes their share (no loop over funders, so no crowd of small funders can
    /// block a refund).
    public entry fun withdraw_refund(funder: &signer, bounty_id: u64) acquires Registry, BountyEvents {
        let funder_addr = signer::address_of(funder);
        let registry = borrow_global_mut<Registry>(@code3);
        let held = contribution_of(&registry.contributions, bounty_id, funder_addr);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(bounty.refund_total != 0, E_NO_REFUND);
        assert!(held != 0, E_NO_REFUND);
        let share = take_refund(bounty, held);
        refund_funder(registry, bounty_id, funder_addr, share);
    }

    /// A dispute, with a reason, goes to the bounty's resolver. During cooling only the sponsor disputes
    /// (before cooling_until), and an unruled dispute pays the winner `dispute_period` later. Before a merge a
    /// worker with a submitted PR (live, or closed unmerged) disputes until deadline + REFUND_GRACE: the refund
    /// then waits for the ruling, but never past that time.
    public entry fun dispute(party: &signer, bounty_id: u64, reason: String) acquires Registry, BountyEvents {
        do_dispute(signer::address_of(party), bounty_id, reason);
    }

    /// The bounty's resolver opens a dispute for the account linked to `forge_user_id`.
    public entry fun dispute_for(resolver: &signer, bounty_id: u64, forge_user_id: u64, reason: String)
    acquires Registry, BountyEvents {
        let actor = actor_of(resolver, bounty_id, forge_user_id);
        do_dispute(actor, bounty_id, reason);
    }

    fun do_dispute(party: address, bounty_id: u64, reason: String) acquires Registry, BountyEvents {
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        let length = string::length(&reason);
        assert!(length > 0 && length <= MAX_REASON_BYTES, E_INVALID_REASON);
        assert!(option::is_none(&bounty.dispute), E_DISPUTED);
        let status = bounty.status;
        let rule_by = if (status == STATUS_COOLING_DOWN) {
            assert!(party == bounty.sponsor, E_NOT_SPONSOR);
            assert!(now < *option::borrow(&bounty.cooling_until), E_DISPUTE_WINDOW_CLOSED);
            now + bounty.dispute_period
        } else if (status == STATUS_STARTED || status == STATUS_PR_SUBMITTED) {
            let (submitted, _) = index_of_worker(&bounty.submissions, party);
            assert!(submitted, E_PR_NOT_SUBMITTED);
            assert!(now < bounty.deadline + REFUND_GRACE, E_DISPUTE_WINDOW_CLOSED);
            bounty.deadline + REFUND_GRACE
        } else {
            abort E_INVALID_STATE
        };
        bounty.dispute = option::some(Dispute { by: party, reason, opened_at: now, rule_by });
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).dispute_opened, DisputeOpened {
            bounty_id, by: party, reason, rule_by,
        });
    }

    /// The bounty's resolver rules an open dispute between the sponsor's side and the claimant (the winner
    /// during cooling, else the worker who disputed), before the dispute's rule_by: `share_bps` of the pool to
    /// the claimant (BPS: pay; 0: refund; between: a split), the rest refunded to the funders (the sponsor's
    /// share at once). Nobody else can be paid by a ruling.
    public entry fun rule(resolver: &signer, bounty_id: u64, share_bps: u64) acquires Registry, BountyEvents {
        let now = timestamp::now_seconds();
        let registry = borrow_global_mut<Registry>(@code3);
        let sponsor = bounty_ref(&registry.bounties, bounty_id).sponsor;
        let held = contribution_of(&registry.contributions, bounty_id, sponsor);
        let bounty = bounty_mut(&mut registry.bounties, bounty_id);
        assert!(signer::address_of(resolver) == bounty.resolver, E_NOT_RESOLVER);
        assert!(option::is_some(&bounty.dispute), E_NO_DISPUTE);
        assert!(share_bps <= BPS, E_INVALID_SHARE);
        let opened = *option::borrow(&bounty.dispute);
        assert!(now < opened.rule_by, E_DISPUTE_WINDOW_CLOSED);
        let claimant = if (bounty.status == STATUS_COOLING_DOWN) *option::borrow(&bounty.winner) else opened.by;
        let pool = bounty.pool;
        // pool * share_bps can pass u64: computed in u128, the result is at most pool
        let paid = ((((pool as u128) * (share_bps as u128)) / (BPS as u128)) as u64);
        let refunded = pool - paid;
        bounty.dispute = option::none();
        bounty.status = if (paid > 0) STATUS_PAID else STATUS_CANCELLED;
        let payment = payout(bounty, claimant, paid, now);
        let share = 0;
        if (refunded > 0) {
            bounty.refund_total = refunded;
            share = take_refund(bounty, held);
        };
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).dispute_ruled, DisputeRuled {
            bounty_id, claimant, share_bps, paid, refunded,
        });
        if (paid > 0) {
            pay_all(&registry.escrow, registry.asset_metadata, &payment.recipients, &payment.amounts);
            event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_paid, payment);
        };
        if (refunded > 0) {
            event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).bounty_cancelled, BountyCancelled {
                bounty_id, refund_to: sponsor, amount: refunded, disputed: true,
            });
            if (held > 0) refund_funder(registry, bounty_id, sponsor, share);
        };
    }

    /// A tip on a bounty's issue: `amount` from the tipper's own balance to a linked account, once per nonce (the
    /// comment id of a command): a re-signed transaction cannot tip twice.
    public entry fun tip(tipper: &signer, bounty_id: u64, to: address, amount: u64, nonce: u64)
    acquires Registry, BountyEvents {
        let tipper_addr = signer::address_of(tipper);
        let registry = borrow_global_mut<Registry>(@code3);
        let bounty = bounty_ref(&registry.bounties, bounty_id);
        let resolver = bounty.resolver;
        let asset = bounty.asset;
        assert!(amount > 0, E_INVALID_AMOUNT);
        let nonce_key = NonceKey { account: tipper_addr, nonce };
        assert!(!table::contains(&registry.nonces, nonce_key), E_NONCE_USED);
        assert!(table::contains(&registry.linked_ids, AccountKey { resolver, account: to }), E_NOT_LINKED);
        assert!(primary_fungible_store::balance(tipper_addr, registry.asset_metadata) >= amount,
            E_INSUFFICIENT_BALANCE);
        table::add(&mut registry.nonces, nonce_key, true);
        primary_fungible_store::transfer(tipper, registry.asset_metadata, to, amount);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).tipped, Tipped {
            bounty_id, tipper: tipper_addr, to, asset, amount, nonce,
        });
    }

    // --- views ------------------------------------------------------------------------------------------

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

    /// At most min(limit, MAX_PAGE) bounty ids from `start` on (ids are 1, 2, 3... and never removed).
    #[view]
    public fun list_bounty_ids(start: u64, limit: u64): vector<u64> acquires Registry {
        page_ids(borrow_global<Registry>(@code3).next_id, start, limit)
    }

    /// The bounties of the same page as list_bounty_ids.
    #[view]
    public fun get_bounties(start: u64, limit: u64): vector<Bounty> acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        let ids = page_ids(registry.next_id, start, limit);
        let found = vector::empty<Bounty>();
        let i = 0;
        let n = vector::length(&ids);
        while (i < n) {
            vector::push_back(&mut found, *table::borrow(&registry.bounties, *vector::borrow(&ids, i)));
            i = i + 1;
        };
        found
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
            dispute_period: registry.dispute_period,
        }
    }

    /// The address linked to a forge account under `resolver` (links are kept per resolver).
    #[view]
    public fun linked_account(resolver: address, forge_user_id: u64): Option<address> acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        let key = LinkKey { resolver, forge_user_id };
        if (!table::contains(&registry.links, key)) return option::none();
        option::some(*table::borrow(&registry.links, key))
    }

    #[view]
    public fun linked_forge_id(resolver: address, account: address): Option<u64> acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        let key = AccountKey { resolver, account };
        if (!table::contains(&registry.linked_ids, key)) return option::none();
        option::some(*table::borrow(&registry.linked_ids, key))
    }

    /// The bounty a merged PR settled, if any.
    #[view]
    public fun settled_by(repo_id: u64, pr_number: u64): Option<u64> acquires Registry {
        let registry = borrow_global<Registry>(@code3);
        let key = PrKey { repo_id, pr_number };
        if (!table::contains(&registry.settled_prs, key)) return option::none();
        option::some(*table::borrow(&registry.settled_prs, key))
    }

    /// What `funder` put into the bounty and has not withdrawn.
    #[view]
    public fun contribution(bounty_id: u64, funder: address): u64 acquires Registry {
        contribution_of(&borrow_global<Registry>(@code3).contributions, bounty_id, funder)
    }

    #[view]
    public fun nonce_used(account: address, nonce: u64): bool acquires Registry {
        table::contains(&borrow_global<Registry>(@code3).nonces, NonceKey { account, nonce })
    }

    /// A contest's entrant (an exclusive bounty's holder is the bounty's `holder`).
    #[view]
    public fun is_entrant(bounty_id: u64, worker: address): bool acquires Registry {
        table::contains(&borrow_global<Registry>(@code3).entrants, EntrantKey { bounty_id, worker })
    }

    // --- helpers ----------------------------------------------------------------------------------------

    fun bounty_mut(bounties: &mut Table<u64, Bounty>, bounty_id: u64): &mut Bounty {
        assert!(table::contains(bounties, bounty_id), E_BOUNTY_NOT_FOUND);
        table::borrow_mut(bounties, bounty_id)
    }

    fun bounty_ref(bounties: &Table<u64, Bounty>, bounty_id: u64): &Bounty {
        assert!(table::contains(bounties, bounty_id), E_BOUNTY_NOT_FOUND);
        table::borrow(bounties, bounty_id)
    }

    fun contribution_of(contributions: &Table<FunderKey, u64>, bounty_id: u64, funder: address): u64 {
        let key = FunderKey { bounty_id, funder };
        if (!table::contains(contributions, key)) return 0;
        *table::borrow(contributions, key)
    }

    /// The only use of the escrow's signer capability. A zero amount (a split's rounding) moves nothing.
    fun pay_from_escrow(escrow: &SignerCapability, metadata: Object<Metadata>, to: address, amount: u64) {
        if (amount == 0) return;
        let escrow_signer = account::create_signer_with_capability(escrow);
        primary_fungible_store::transfer(&escrow_signer, metadata, to, amount);
    }

    /// Pays each recipient its amount (at most MAX_SPLIT of them).
    fun pay_all(escrow: &SignerCapability, metadata: Object<Metadata>, recipients: &vector<address>,
                amounts: &vector<u64>) {
        let i = 0;
        let n = vector::length(recipients);
        while (i < n) {
            pay_from_escrow(escrow, metadata, *vector::borrow(recipients, i), *vector::borrow(amounts, i));
            i = i + 1;
        };
    }

    /// The payment of `amount` to `to`, through the winner's split when `to` is the winner who set one.
    fun payout(bounty: &Bounty, to: address, amount: u64, now: u64): BountyPaid {
        let recipients = vector::singleton(to);
        let amounts = vector::singleton(amount);
        if (option::is_some(&bounty.split) && option::contains(&bounty.winner, &to)) {
            let split = option::borrow(&bounty.split);
            recipients = split.recipients;
            amounts = split_amounts(amount, &split.shares);
        };
        BountyPaid { bounty_id: bounty.bounty_id, winner: to, asset: bounty.asset, amount, paid_at: now, recipients,
                     amounts }
    }

    /// `total` divided by relative shares, each rounded down; the remainder goes to the first named.
    fun split_amounts(total: u64, shares: &vector<u64>): vector<u64> {
        let n = vector::length(shares);
        let whole: u128 = 0;
        let i = 0;
        while (i < n) {
            whole = whole + (*vector::borrow(shares, i) as u128);
            i = i + 1;
        };
        let amounts = vector::empty<u64>();
        let given = 0;
        i = 0;
        while (i < n) {
            // total * share can pass u64: computed in u128, each result is at most total
            let part = ((((total as u128) * (*vector::borrow(shares, i) as u128)) / whole) as u64);
            vector::push_back(&mut amounts, part);
            given = given + part;
            i = i + 1;
        };
        let first = vector::borrow_mut(&mut amounts, 0);
        *first = *first + (total - given);
        amounts
    }

    /// A funder's part of the refund (its contribution's share of it, rounded down; the last funder to withdraw
    /// takes what is left), counted as withdrawn; 0 for a funder with nothing left in the bounty.
    fun take_refund(bounty: &mut Bounty, held: u64): u64 {
        if (held == 0) return 0;
        let share = if (bounty.funders == 1) {
            bounty.refund_total - bounty.refunded
        } else {
            ((((held as u128) * (bounty.refund_total as u128)) / (bounty.pool as u128)) as u64)
        };
        bounty.refunded = bounty.refunded + share;
        bounty.funders = bounty.funders - 1;
        share
    }

    /// Pays `funder` their share out of escrow and forgets their contribution.
    fun refund_funder(registry: &mut Registry, bounty_id: u64, funder: address, share: u64) acquires BountyEvents {
        table::remove(&mut registry.contributions, FunderKey { bounty_id, funder });
        pay_from_escrow(&registry.escrow, registry.asset_metadata, funder, share);
        event::emit_event(&mut borrow_global_mut<BountyEvents>(@code3).refund_withdrawn, RefundWithdrawn {
            bounty_id, funder, amount: share,
        });
    }

    /// Every recipient is linked under `resolver` (read before the split's checks, as the embedded ledger does;
    /// at most MAX_SPLIT are looked at, since check_split refuses a longer list anyway).
    fun all_linked(linked_ids: &Table<AccountKey, u64>, resolver: address, recipients: &vector<address>): bool {
        let i = 0;
        let n = vector::length(recipients);
        while (i < n && i < MAX_SPLIT) {
            if (!table::contains(linked_ids, AccountKey { resolver, account: *vector::borrow(recipients, i) })) {
                return false
            };
            i = i + 1;
        };
        true
    }

    /// domain.contract.check_split: 1 to MAX_SPLIT different recipients, one share each of 1 to MAX_SHARE.
    fun check_split(recipients: &vector<address>, shares: &vector<u64>) {
        let n = vector::length(recipients);
        assert!(n > 0 && n <= MAX_SPLIT && vector::length(shares) == n, E_INVALID_SPLIT);
        let i = 0;
        while (i < n) {
            let share = *vector::borrow(shares, i);
            let distinct = true;
            let j = i + 1;
            while (j < n) {
                if (*vector::borrow(recipients, j) == *vector::borrow(recipients, i)) distinct = false;
                j = j + 1;
            };
            assert!(distinct && share > 0 && share <= MAX_SHARE, E_INVALID_SPLIT);
            i = i + 1;
        };
    }

    /// At most min(limit, MAX_PAGE) ids from max(start, 1) below `next_id`.
    fun page_ids(next_id: u64, start: u64, limit: u64): vector<u64> {
        let ids = vector::empty<u64>();
        let count = if (limit < MAX_PAGE) limit else MAX_PAGE;
        let id = if (start == 0) 1 else start;
        while (id < next_id && vector::length(&ids) < count) {
            vector::push_back(&mut ids, id);
            id = id + 1;
        };
        ids
    }

    /// Open, started or with a PR submitted: before a merge (fundable, cancellable).
    fun is_live_status(status: u8): bool {
        status == STATUS_OPEN || status == STATUS_STARTED || status == STATUS_PR_SUBMITTED
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

    /// Whether some submission (at most MAX_SUBMISSIONS) is live.
    fun has_live(submissions: &vector<Submission>): bool {
        let i = 0;
        let n = vector::length(submissions);
        while (i < n) {
            if (vector::borrow(submissions, i).state == STATE_LIVE) return true;
            i = i + 1;
        };
        false
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

    /// `worker` has a live submission of `pr_url`.
    fun is_live_submission(submissions: &vector<Submission>, worker: address, pr_url: &String): bool {
        let (found, i) = index_of_worker(submissions, worker);
        if (!found) return false;
        let submission = vector::borrow(submissions, i);
        submission.state == STATE_LIVE && &submission.pr_url == pr_url
    }
}
