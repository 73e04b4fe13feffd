// SPDX-License-Identifier: MIT
/(* Sb"
#include "ÿÿ¿¿¿¿¿¿¿¿¿¿¿¿¿¿¿¿¿¿ÿÇh"
__kerneoncene S "a\\

#include "h"
