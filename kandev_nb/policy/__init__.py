"""Approval policies: enforcing the deny side in every mode (:mod:`kandev_nb.policy.enforce`)
and scoped session grants (:mod:`kandev_nb.policy.grants`)."""
