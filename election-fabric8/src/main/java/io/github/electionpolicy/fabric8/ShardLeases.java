package io.github.electionpolicy.fabric8;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The names and the label of the Leases of one sharded controller (docs/architecture.md, "Sharded ownership"): for
 * the base Lease name {@code L}, shard {@code i} is owned through the Lease {@code L-shard-<i>} and each replica
 * holds a membership Lease {@code L-member-<identity, made a valid name>}; all of them carry the label
 * {@value #LABEL}{@code =<L, made a valid label value>}, so that one list and watch by that label sees them all, and
 * {@link #parse} tells which is which. Every name is a valid Lease name (a DNS-1123 subdomain of at most 253
 * characters) and the label value a valid one (at most 63 characters), whatever the identity.
 *
 * <p>A part that had to be changed to be valid (an identity with capitals or characters a name cannot hold, a name
 * or label value that would be too long) is cut and followed by {@code -} and the 8 hex digits of its hash (the low
 * 32 bits of 64-bit FNV-1a, as {@link Shards#hash}), so that two identities that differ only in what was changed
 * still get two names. Two identities can still meet on one name (a 32-bit hash); the membership Lease's holder is
 * the identity itself, so a replica that finds its membership Lease held by another identity knows it.
 *
 * <p>Pure and immutable, so thread-safe.
 */
final class ShardLeases {

  /** The label every Lease of a sharded controller carries; its value names the controller (its base Lease). */
  static final String LABEL = "election-policy.io/sharded-lease";

  /** The label keys a shard runner's own writes put on a shard's Lease: {@link #LABEL} alone. */
  static final java.util.Set<String> LABEL_ONLY = java.util.Set.of(LABEL);

  /**
   * The annotation a member puts on its membership Lease, with the value {@code "true"}, when it starts to leave:
   * every view counts it out from then on, while it still renews the Lease until its shards have stopped.
   */
  static final String LEAVING = "election-policy.io/leaving";

  static final int MAX_NAME = 253;
  static final int MAX_LABEL_VALUE = 63;
  private static final String SHARD = "-shard-";
  private static final String MEMBER = "-member-";
  /** A DNS-1123 subdomain (its length aside), as the API server checks a Lease's name. */
  static final Pattern NAME_PART =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern SHARD_NUMBER = Pattern.compile("0|[1-9][0-9]{0,3}");

  private final String base;
  private final int shardCount;
  private final String shardPrefix;
  private final String memberPrefix;
  private final String labelValue;

  /**
   * The Leases of the controller whose base Lease is {@code baseLeaseName} (a valid Lease name, as {@link
   * LeaseSettings} checks it) split into {@code shardCount} shards (1 to {@value Shards#MAX_SHARDS}).
   */
  ShardLeases(String baseLeaseName, int shardCount) {
    this.base = Objects.requireNonNull(baseLeaseName, "baseLeaseName");
    if (base.isEmpty() || base.length() > MAX_NAME || !NAME_PART.matcher(base).matches()) {
      throw new IllegalArgumentException("baseLeaseName is \"" + base + "\"; expected a DNS-1123 subdomain of at "
          + "most " + MAX_NAME + " characters");
    }
    if (shardCount < 1 || shardCount > Shards.MAX_COUNT) {
      throw new IllegalArgumentException("shardCount is " + shardCount + "; expected 1 to " + Shards.MAX_COUNT);
    }
    this.shardCount = shardCount;
    // The prefixes leave room for the longest shard number and for a hashed identity of at least one character.
    this.shardPrefix = fit(base, MAX_NAME - SHARD.length() - Integer.toString(Shards.MAX_COUNT - 1).length())
        + SHARD;
    this.memberPrefix = fit(base, MAX_NAME - MEMBER.length() - 10) + MEMBER;
    this.labelValue = fit(base, MAX_LABEL_VALUE);
  }

  /** The Lease through which shard {@code shard} is owned. */
  String shardLease(int shard) {
    Objects.checkIndex(shard, shardCount);
    return shardPrefix + shard;
  }

  /** The membership Lease of the replica {@code identity} (any non-empty string). */
  String memberLease(String identity) {
    Objects.requireNonNull(identity, "identity");
    if (identity.isEmpty()) {
      throw new IllegalArgumentException("identity is empty; expected the replica's identity");
    }
    int room = MAX_NAME - memberPrefix.length();
    String part = NAME_PART.matcher(identity).matches() && identity.length() <= room ? identity
        : hashed(sanitized(identity), identity, room);
    return memberPrefix + part;
  }

  /** The value of {@link #LABEL} on every Lease of this controller. */
  String labelValue() {
    return labelValue;
  }

  /**
   * What a Lease named {@code leaseName} (one listed by the label) is to this controller: a shard's, a member's, or
   * neither (another controller's whose label value is the same after hashing, or a Lease someone else labelled).
   */
  Kind parse(String leaseName) {
    if (leaseName.startsWith(shardPrefix)) {
      String number = leaseName.substring(shardPrefix.length());
      int shard = SHARD_NUMBER.matcher(number).matches() ? Integer.parseInt(number) : shardCount;
      return shard < shardCount ? new Kind.Shard(shard) : new Kind.Other();
    }
    if (leaseName.startsWith(memberPrefix) && leaseName.length() > memberPrefix.length()) {
      return new Kind.Member();
    }
    return new Kind.Other();
  }

  /** What a listed Lease is to the controller. */
  sealed interface Kind {
    /** The Lease of shard {@code shard}. */
    record Shard(int shard) implements Kind {}

    /** A replica's membership Lease (its holder names the replica). */
    record Member() implements Kind {}

    /** Not one of this controller's Leases. */
    record Other() implements Kind {}
  }

  /** {@code name} if it is at most {@code max} characters, else cut and followed by its hash. */
  private static String fit(String name, int max) {
    return name.length() <= max ? name : hashed(name, name, max);
  }

  /**
   * {@code readable} cut to leave room for {@code -} and 8 hex digits within {@code max}, without a trailing
   * {@code -} or {@code .}, then the hash of {@code original}.
   */
  private static String hashed(String readable, String original, int max) {
    String hash = String.format("%08x", (int) Shards.hash(original));
    String cut = readable.length() > max - 9 ? readable.substring(0, max - 9) : readable;
    cut = cut.replaceAll("[-.]+$", "");
    return cut.isEmpty() ? hash : cut + "-" + hash;
  }

  /** {@code identity} in lower case with every character but a letter or a digit made one {@code -}, untrimmed. */
  private static String sanitized(String identity) {
    StringBuilder out = new StringBuilder(identity.length());
    for (char c : identity.toLowerCase(java.util.Locale.ROOT).toCharArray()) {
      out.append(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ? c : '-');
    }
    return out.toString().replaceAll("^-+", "").replaceAll("-{2,}", "-");
  }
}
