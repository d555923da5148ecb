package io.github.electionpolicy.josdk.sample;

import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A custom resource with a status, {@code gadgets.example.electionpolicy.io/v1}: what the sharded operator's fence
 * tests patch the status of through JOSDK's {@code UpdateControl.patchStatus}.
 */
@Group("example.electionpolicy.io")
@Version("v1")
public class Gadget extends CustomResource<WidgetSpec, Gadget.Status> implements Namespaced {

  private static final long serialVersionUID = 1L;

  /** A gadget named {@code name} in {@code namespace}. */
  public static Gadget named(String namespace, String name) {
    Gadget gadget = new Gadget();
    gadget.getMetadata().setNamespace(namespace);
    gadget.getMetadata().setName(name);
    WidgetSpec spec = new WidgetSpec();
    spec.setColor("blue");
    gadget.setSpec(spec);
    return gadget;
  }

  /** Who reconciled the gadget last, as its status says. */
  public static class Status {
    private String reconciledBy;

    public String getReconciledBy() {
      return reconciledBy;
    }

    public void setReconciledBy(String reconciledBy) {
      this.reconciledBy = reconciledBy;
    }
  }
}
