window.unpinnedRan = true;
