# STOKER_SANITIZE="address;undefined" or "thread" instruments everything built here.
if(STOKER_SANITIZE)
  list(JOIN STOKER_SANITIZE "," _stoker_san)
  add_compile_options(-fsanitize=${_stoker_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_stoker_san})
endif()
