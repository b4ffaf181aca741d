"""Perturbations of evidence (``strategies``, ``onmanifold``) and the manifold filter that
keeps them plausible (``manifold``). Import from the module that holds what you need."""
