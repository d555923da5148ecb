package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The resource a reconciliation is of, as {@link ShardFence} needs it to make that reconciliation's writes of it
 * conditional on its uid: a sharded operator shards by {@code metadata.uid}, JOSDK writes by name, and a write that
 * outlives the object (deleted, then made again under its name, with another uid, maybe of a shard another replica
 * owns) must not land on the new one (review r2, finding 4).
 *
 * <p>A write is the resource's own when its path is the resource's (any version of its group, its plural, namespace
 * and name), or one of its subresources that write the object: {@code status}, {@code scale}, and those of the
 * built-in kinds ({@code ephemeralcontainers} and {@code resize} of a Pod, {@code finalize} of a Namespace, {@code
 * approval} of a CertificateSigningRequest, {@code eviction} of a Pod). {@link #withUid} gives the body to send
 * instead, one the API server refuses unless the object under that name still has the uid the reconciliation began
 * with:
 * <ul>
 *   <li>a JSON Patch ({@code application/json-patch+json}) begins with {@code {"op":"test","path":"/metadata/uid",
 *       "value":UID}} (a failed test is a 422);
 *   <li>a JSON merge patch, a strategic merge patch and a server-side apply ({@code application/apply-patch+yaml},
 *       which fabric8 sends as JSON) set {@code metadata.uid}, as does a {@code PUT}: uid is immutable, so the server
 *       refuses a change of it (422 for a patch; 409 for a {@code PUT}, whose uid is a precondition);
 *   <li>a {@code DELETE} carries {@code DeleteOptions} with {@code preconditions.uid} (a 409 on a mismatch), as does
 *       the {@code deleteOptions} of a {@code POST} of an {@code eviction}.
 * </ul>
 * A JSON body is written again with each number as the text it came as ({@link RawJson}). A body it cannot read, or of
 * another patch type, is refused rather than sent without the condition. Immutable.
 */
record UidPrecondition(String group, String plural, String namespace, String name, String uid) {

  // The subresources whose writes write the object itself (eviction deletes it).
  private static final java.util.Set<String> SUBRESOURCES = java.util.Set.of("status", "scale", "ephemeralcontainers",
      "resize", "finalize", "approval", "eviction");

  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  /** The precondition for writes of {@code resource}, or null if it has no uid or name (nothing to hold it to). */
  static UidPrecondition of(HasMetadata resource) {
    if (resource == null || resource.getMetadata() == null || resource.getMetadata().getUid() == null
        || resource.getMetadata().getName() == null) {
      return null;
    }
    Class<? extends HasMetadata> type = resource.getClass();
    String group = HasMetadata.getGroup(type);
    return new UidPrecondition(group == null ? "" : group, HasMetadata.getPlural(type),
        resource.getMetadata().getNamespace(), resource.getMetadata().getName(), resource.getMetadata().getUid());
  }

  /**
   * Whether {@code path} (raw, without the query) is this resource's, or one of its subresources that write it: {@code
   * /api/VERSION/...} for the core group, {@code /apis/GROUP/VERSION/...} for another, then {@code
   * namespaces/NAMESPACE/} if it is namespaced, then {@code PLURAL/NAME}.
   */
  boolean isPathOf(String path) {
    if (path == null) {
      return false;
    }
    String[] segments = path.startsWith("/") ? path.substring(1).split("/", -1) : path.split("/", -1);
    int at;
    if (group.isEmpty() && segments.length > 2 && segments[0].equals("api")) {
      at = 2;
    } else if (!group.isEmpty() && segments.length > 3 && segments[0].equals("apis") && segments[1].equals(group)) {
      at = 3;
    } else {
      return false;
    }
    if (namespace != null) {
      if (segments.length < at + 2 || !segments[at].equals("namespaces") || !segments[at + 1].equals(namespace)) {
        return false;
      }
      at += 2;
    }
    if (segments.length < at + 2 || !segments[at].equals(plural) || !segments[at + 1].equals(name)) {
      return false;
    }
    int rest = segments.length - (at + 2);
    return rest == 0 || rest == 1 && SUBRESOURCES.contains(segments[at + 2]);
  }

  /**
   * The body to send for a write of this resource ({@link #isPathOf} its path) so that it lands only on the object with
   * this uid; {@code body} itself for a method other than {@code PATCH}, {@code PUT}, {@code DELETE} and the {@code
   * POST} of an {@code eviction}.
   *
   * @throws KubernetesClientException if the body cannot be made conditional (a patch type or a body it cannot
   *     read): the write is then not sent
   */
  @SuppressWarnings("unchecked")
  String withUid(String method, String path, String contentType, String body) {
    String type = contentType == null ? "" : contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    switch (method) {
      case "PATCH":
        if (type.equals("application/json-patch+json")) {
          List<Object> patch = new ArrayList<>((List<Object>) read(method, path, body, List.class));
          Map<String, Object> test = new LinkedHashMap<>();
          test.put("op", "test");
          test.put("path", "/metadata/uid");
          test.put("value", uid);
          patch.add(0, test);
          return write(method, path, patch);
        }
        if (type.equals("application/merge-patch+json") || type.equals("application/strategic-merge-patch+json")
            || type.equals("application/apply-patch+yaml")) {
          return withMetadataUid(method, path, body);
        }
        throw refused(method, path, "its patch type " + contentType + " is not one the fence can add the uid to");
      case "PUT":
        return withMetadataUid(method, path, body);
      case "DELETE":
        Map<String, Object> options = body == null || body.isBlank() ? new LinkedHashMap<>()
            : new LinkedHashMap<>((Map<String, Object>) read(method, path, body, Map.class));
        options.putIfAbsent("apiVersion", "v1");
        options.putIfAbsent("kind", "DeleteOptions");
        child(options, "preconditions").put("uid", uid);
        return write(method, path, options);
      case "POST":
        if (!path.endsWith("/eviction")) {
          return body;
        }
        Map<String, Object> eviction = new LinkedHashMap<>((Map<String, Object>) read(method, path, body, Map.class));
        child(child(eviction, "deleteOptions"), "preconditions").put("uid", uid);
        return write(method, path, eviction);
      default:
        return body;
    }
  }

  @SuppressWarnings("unchecked")
  private String withMetadataUid(String method, String path, String body) {
    Map<String, Object> object = new LinkedHashMap<>((Map<String, Object>) read(method, path, body, Map.class));
    child(object, "metadata").put("uid", uid);
    return write(method, path, object);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> child(Map<String, Object> parent, String key) {
    Object value = parent.get(key);
    Map<String, Object> child = value instanceof Map<?, ?> map ? new LinkedHashMap<>((Map<String, Object>) map)
        : new LinkedHashMap<>();
    parent.put(key, child);
    return child;
  }

  /** {@code body} read as a {@code type} ({@link List} or {@link Map}). */
  private Object read(String method, String path, String body, Class<?> type) {
    Object read;
    try {
      if (body == null || body.isBlank()) {
        read = null;
      } else if (body.stripLeading().startsWith("{") || body.stripLeading().startsWith("[")) {
        // JSON, its numbers kept as they came (RawJson): not rounded to a double.
        read = RawJson.read(body);
      } else {
        read = JSON.unmarshal(body, type); // YAML (an apply the user wrote as such)
      }
    } catch (RuntimeException unreadable) {
      throw refused(method, path, "its body could not be read (" + unreadable.getMessage() + ")");
    }
    if (!type.isInstance(read)) {
      throw refused(method, path, "its body is not a JSON " + (type == List.class ? "array" : "object"));
    }
    return read;
  }

  /** {@code body} (from {@link #read}) as JSON; the numbers of a JSON body as they came. */
  private static String write(String method, String path, Object body) {
    return RawJson.write(body, JSON::asJson);
  }

  private KubernetesClientException refused(String method, String path, String why) {
    return new KubernetesClientException("refused " + method + " " + path + ": it was made in a reconciliation of "
        + plural + " " + (namespace == null ? "" : namespace + "/") + name + " (uid " + uid + "), and the sharded "
        + "operator's fence sends a write of that resource only on the condition that the object has that uid, but "
        + why + "; the request was not sent");
  }
}
